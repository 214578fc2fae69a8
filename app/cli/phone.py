"""`draftdeck devices`, `draftdeck push` and `draftdeck phone-packs`: the phone without
a window. The adb server port follows ANDROID_ADB_SERVER_PORT."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli.progress import run_with_progress
from app.core.infra.errors import PhoneError
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo
from app.core.pack.library import Library
from app.core.phone.adb import NO_DEVICES, Adb
from app.core.phone.destinations import check_root, default_root
from app.core.phone.devices import DeviceInfo, DeviceLister
from app.core.phone.phone_packs import list_packs
from app.core.phone.push import DONE, STOPPED, PushJob, PushStatus


def _library_packs() -> dict[str, BundleInfo]:
    return {e.name: e.info for e in Library(load_settings(), save_settings).scan() if e.info}


def _pick_device(adb: Adb, serial: str | None) -> DeviceInfo:
    devices = DeviceLister(adb).list()
    if serial:
        for device in devices:
            if device.serial == serial:
                break
        else:
            raise PhoneError(f"No phone {serial} is attached (see `draftdeck devices`).")
    else:
        ready = [d for d in devices if d.ready]
        if not devices:
            raise PhoneError(NO_DEVICES, "no_device")
        if not ready:
            raise PhoneError(f"{devices[0].serial}: {devices[0].guidance}", devices[0].state)
        if len(ready) > 1:
            names = ", ".join(d.serial for d in ready)
            raise PhoneError(f"Several phones are attached ({names}): choose one with --serial.")
        device = ready[0]
    if not device.ready:
        raise PhoneError(f"{device.serial} is {device.state}: {device.guidance}", device.state)
    return device


def cmd_devices(args: argparse.Namespace) -> int:
    devices = DeviceLister(Adb()).list()
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


def _resolve_pack(text: str) -> Path:
    path = Path(text)
    if path.is_dir():
        return path.resolve()
    packs = _library_packs()
    if text in packs:
        return packs[text].path
    raise PhoneError(f"{text} is neither a pack folder nor the name of a pack in the library.")


def cmd_push(args: argparse.Namespace) -> int:
    adb = Adb()
    device = _pick_device(adb, args.serial)
    root = check_root(args.dest) if args.dest else default_root()
    job = PushJob(adb, device.serial, _resolve_pack(args.pack), root, args.recipe_only)
    run_with_progress(job, job.pack.name)
    status = job.status()
    if args.json:
        print(json.dumps(status.to_json()))
    if status.state != DONE:
        # Ctrl+C interrupts run() itself, so the job never got to say it stopped.
        why = status.error if job.is_finished() else STOPPED
        print(f"draftdeck: push of {status.pack} did not finish: {why}", file=sys.stderr)
        return 1
    if not args.json:
        print(_summary(status))
    return 0


def _summary(s: PushStatus) -> str:
    return (
        f"{s.pack} is on {s.serial} in {s.dest}: {len(s.pushed)} files pushed "
        f"({format_bytes(s.done_bytes)}), {len(s.skipped)} already there, "
        f"{len(s.verified)} verified by sha256."
    )


def cmd_phone_packs(args: argparse.Namespace) -> int:
    adb = Adb()
    device = _pick_device(adb, args.serial)
    root = check_root(args.dest) if args.dest else default_root()
    packs = list_packs(adb.phone(device.serial), root, _library_packs())
    if args.json:
        result: dict[str, Any] = {
            "serial": device.serial,
            "root": root,
            "packs": [p.to_json() for p in packs],
        }
        print(json.dumps(result, indent=2))
        return 0
    if not packs:
        print(f"No packs in {root} on {device.serial}.")
    for p in packs:
        print(f"{p.name:<40} {format_bytes(p.size):>10}  {p.files:>3} files  {p.match}")
    return 0


def add_parsers(sub: Any) -> None:
    devices = sub.add_parser("devices", help="attached Android phones and their state")
    devices.add_argument("--json", action="store_true")
    devices.set_defaults(func=cmd_devices)

    dest_help = f"folder on the phone that holds packs (default {default_root()})"
    push = sub.add_parser("push", help="copy a pack (or its recipes) to a phone, verified; resumes")
    push.add_argument("pack", metavar="PACK", help="pack folder, or a library pack's name")
    push.add_argument("--serial", metavar="S", help="which phone (see `draftdeck devices`)")
    push.add_argument("--dest", metavar="PATH", help=dest_help)
    push.add_argument("--recipe-only", action="store_true", help="push only the recipe JSON files")
    push.add_argument(
        "--json",
        action="store_true",
        help="print serial, dest, pushed, skipped, verified, bytes, seconds, state",
    )
    push.set_defaults(func=cmd_push)

    packs = sub.add_parser("phone-packs", help="packs on a phone, compared with the library")
    packs.add_argument("--serial", metavar="S")
    packs.add_argument("--dest", metavar="PATH", help=dest_help)
    packs.add_argument("--json", action="store_true")
    packs.set_defaults(func=cmd_phone_packs)
