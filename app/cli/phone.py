"""`draftdeck devices`, `draftdeck push` and `draftdeck phone-packs`: the phone without
a window. The adb server port follows ANDROID_ADB_SERVER_PORT."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli.progress import run_with_progress
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.units import format_bytes
from app.core.measure.ram_estimate import estimate_model
from app.core.pack.library import Library
from app.core.phone.adb import NO_DEVICES
from app.core.phone.desk import PhoneDesk
from app.core.phone.destinations import default_root
from app.core.phone.pair_link import target_drafts
from app.core.phone.push import DONE, STOPPED, PushJob, PushStatus

# What every phone command's --help says of the adb server it uses.
ADB_ENV = (
    "The adb server is the one on the port ANDROID_ADB_SERVER_PORT names (default 5037), "
    "started when needed: the system's adb if on PATH, else the one shipped with DraftDeck."
)
WAIT_SECONDS = 0.5  # a wait that Ctrl+C can interrupt on every platform


def _desk() -> PhoneDesk:
    # The memory check's estimate, from the measure domain (phone code may not import it).
    return PhoneDesk(Library(load_settings(), save_settings), estimate=estimate_model)


class _QueuedPush:
    """A push on the desk's lane, as `run_with_progress` runs a job: `run` waits."""

    def __init__(self, desk: PhoneDesk, job: PushJob) -> None:
        self.desk, self.job = desk, job

    def run(self) -> object:
        while True:
            try:
                return self.desk.queue.wait(self.job, WAIT_SECONDS)
            except TimeoutError:
                continue

    def pause(self) -> None:
        self.job.pause()

    def status(self) -> PushStatus:
        return self.job.status()


def cmd_devices(args: argparse.Namespace) -> int:
    devices = _desk().devices()
    if args.json:
        print(json.dumps({"devices": [d.to_json() for d in devices]}, indent=2))
        return 0
    if not devices:
        print(NO_DEVICES)
    for d in devices:
        if d.ready:
            print(
                f"{d.serial}  {d.model}  Android {d.android}  {d.abi}  "
                f"{format_bytes(d.ram_bytes)} RAM"
            )
        else:
            print(f"{d.serial}  {d.state}: {d.guidance}")
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    desk = _desk()
    pack = desk.resolve_pack(args.pack)  # a mistyped or ambiguous name: said without a phone
    draft = desk.resolve_pack(args.draft) if args.draft else None
    device = desk.choose_device(args.serial)
    root = desk.destination(args.dest)
    if draft is None:
        jobs = [desk.push(device.serial, pack, root, args.recipe_only)]
    else:  # the draft first: the target's link resolves once it is installed
        jobs = list(desk.push_pair(device.serial, pack, draft, root, args.recipe_only))
    try:
        for job in jobs:
            run_with_progress(_QueuedPush(desk, job), job.pack.name)
            if job.status().state != DONE:
                break  # Ctrl+C, or a refusal: the rest is not pushed
    finally:
        desk.shutdown(timeout=5.0)  # after Ctrl+C: let the push say it stopped
    statuses = [job.status() for job in jobs]
    if args.json:
        record = statuses[0].to_json()
        if draft is not None:
            record = {"draft": statuses[0].to_json(), "target": statuses[1].to_json()}
        print(json.dumps(record))
    for job, status in zip(jobs, statuses, strict=True):
        for note in status.notes:
            print(f"draftdeck: note: {note}", file=sys.stderr)
        if draft is None and status.state == DONE and not status.link and target_drafts(pack):
            print(f"draftdeck: {_offer_draft(desk, pack)}", file=sys.stderr)
        if status.state != DONE:
            # A push that did not stop within the wait never got to say it stopped.
            why = status.error if job.is_finished() else STOPPED
            print(f"draftdeck: push of {status.pack} did not finish: {why}", file=sys.stderr)
            return 1
        if not args.json:
            print(_summary(status))
    return 0


def _offer_draft(desk: PhoneDesk, target: Path) -> str:
    """How to push a drafting target with its draft: the one chosen with it in the
    window, if any."""
    settings = desk.library.settings
    chosen = settings.pair_draft if settings.pair_target == str(target) else ""
    name = Path(chosen).name if chosen else "DRAFT"
    return f"to push it with its draft and link them: draftdeck push {target} --draft {name}"


def _summary(s: PushStatus) -> str:
    lines = [
        f"{s.pack} is on {s.serial} in {s.dest}: {len(s.pushed)} files pushed "
        f"({format_bytes(s.done_bytes)}), {len(s.skipped)} already there, "
        f"{len(s.verified)} verified by sha256."
    ]
    if s.link:
        there = "on the phone" if s.link_ok else "NOT on the phone"
        lines.append(f"  draft_config_path: {s.link} ({there})")
    if s.memory:
        lines.append(f"  {s.memory}")
    return "\n".join(lines)


def cmd_phone_packs(args: argparse.Namespace) -> int:
    desk = _desk()
    device = desk.choose_device(args.serial)
    root = desk.destination(args.dest)
    packs = desk.read_folder(device.serial, root).packs
    if args.json:
        listing = {"serial": device.serial, "root": root, "packs": [p.to_json() for p in packs]}
        print(json.dumps(listing, indent=2))
        return 0
    if not packs:
        print(f"No packs in {root} on {device.serial}.")
    for p in packs:
        print(f"{p.name:<40} {format_bytes(p.size):>10}  {p.files:>3} files  {p.match}")
        for line in p.recipes.lines() if p.recipes is not None else []:
            print(f"    {line}")
    return 0


def add_parsers(sub: Any) -> None:
    devices = sub.add_parser(
        "devices",
        help="attached Android phones and their state",
        description="List the Android phones attached over USB (USB debugging on) with "
        "their state, model, Android version, ABI and RAM, and what to do about one that "
        f"is not ready. {ADB_ENV}",
    )
    devices.add_argument(
        "--json",
        action="store_true",
        help="print serial, state, model, android, abi, ram_bytes, guidance as JSON",
    )
    devices.set_defaults(func=cmd_devices)

    dest_help = f"folder on the phone that holds packs (default {default_root()})"
    push = sub.add_parser(
        "push",
        help="copy a pack (or its recipes) to a phone, verified; resumes",
        description="Copy a pack (or only its recipe files) to a phone into DEST/<pack "
        "name>: into a .partial folder first, renamed once every file's sha256 on the phone "
        "matches; files already there are skipped and a cut large file goes on where it "
        "stopped. A target's config.json on the phone names its draft (draft_config_path: "
        "the draft given with --draft, else the one it named there before). Refused when "
        "the phone's RAM cannot hold what its recipes need (a pair counts both models). "
        f"Exit 1 when the push did not finish. {ADB_ENV}",
    )
    push.add_argument("pack", metavar="PACK", help="pack folder, or a library pack's name")
    push.add_argument("--serial", metavar="S", help="which phone (see `draftdeck devices`)")
    push.add_argument("--dest", metavar="PATH", help=dest_help)
    push.add_argument(
        "--draft",
        metavar="DRAFT",
        help="the draft to push with PACK (a target): pushed first, then the target's "
        "config.json on the phone names it (draft_config_path)",
    )
    push.add_argument("--recipe-only", action="store_true", help="push only the recipe JSON files")
    push.add_argument(
        "--json",
        action="store_true",
        help="print serial, dest, pushed, skipped, verified, bytes, seconds, state, "
        "draft_config_path, link_resolves, memory, notes (with --draft: draft and target)",
    )
    push.set_defaults(func=cmd_push)

    packs = sub.add_parser(
        "phone-packs",
        help="packs on a phone, compared with the library",
        description="List the packs in a phone's pack folder, their size, and whether they "
        "match the library (same, differs, not in library, incomplete); for library packs, "
        "the recipe keys that differ (key: phone → library), whether the draft_config_path "
        f"there resolves on the phone, and the RAM its recipes need against the phone's. {ADB_ENV}",
    )
    packs.add_argument("--serial", metavar="S", help="which phone (see `draftdeck devices`)")
    packs.add_argument("--dest", metavar="PATH", help=dest_help)
    packs.add_argument(
        "--json",
        action="store_true",
        help="print name, path, size, files, match, recipes (differences, "
        "draft_config_path, link_resolves, memory) per pack",
    )
    packs.set_defaults(func=cmd_phone_packs)
