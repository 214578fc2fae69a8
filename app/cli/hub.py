"""`draftdeck catalog` and `draftdeck download`: the Hub without a window."""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import TimeoutError as WaitTimedOut
from typing import Any

from app.cli.progress import run_with_progress
from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HUB_TIMEOUT, TIMEOUT_VARIABLE, fetch_plan
from app.core.hub.job import DONE, PAUSED, DownloadJob, JobStatus
from app.core.hub.plan import EXPORT_REASON, SKIPPED_KINDS, RepoPlan, check_repo_id, skip_reason
from app.core.infra.errors import HubError
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.units import format_bytes
from app.core.pack.library import Library

WAIT_STEP = 0.5  # seconds; short waits let Ctrl+C through (Windows blocks it in a long one)
# Files named one per line at most (a repo may list 100,000); --list-all names them all.
LISTED = 20
# What the Hub commands' --help says of the token and the environment they read.
HUB_TOKEN = (
    "The token is hub_token in DraftDeck's settings.json when set, else HF_TOKEN (or "
    "HUGGING_FACE_HUB_TOKEN), else the Hub's own login (`hf auth login`); there is no "
    "--token option."
)
HUB_PLACE = (
    f"HF_ENDPOINT points at another Hub (a mirror); {TIMEOUT_VARIABLE} is how many seconds "
    f"a silent Hub is waited for (default {HUB_TIMEOUT:g})."
)
HUB_ENV = f"A private or gated repo needs a token. {HUB_TOKEN} {HUB_PLACE}"


def _downloads() -> Downloads:
    return Downloads(Library(load_settings(), save_settings))


def cmd_catalog(args: argparse.Namespace) -> int:
    downloads = _downloads()
    note = ""
    if args.refresh:
        try:
            catalog = downloads.refresh_catalog()
        except HubError as exc:
            note = f"could not refresh the live listing: {exc}; showing the cached catalog"
            catalog = downloads.catalog()
    else:
        catalog = downloads.catalog()
    age = catalog.age_seconds()
    if args.json:
        print(
            json.dumps(
                {"entries": [e.to_json() for e in catalog.entries], "live_age_seconds": age},
                indent=2,
            )
        )
    else:
        width = max(len(e.repo_id) for e in catalog.entries)
        for entry in catalog.entries:
            print(f"{entry.repo_id:<{width}}  {entry.role:<7} {entry.family:<8} {entry.source}")
        print(
            "live listing: "
            + ("never fetched (use --refresh)" if age is None else f"{age / 3600:.1f} hours old")
        )
    if note:
        print(f"draftdeck: {note}", file=sys.stderr)
    return 0


class _Queued:
    """A download in the service's queue, run from the command line: `run` waits for it."""

    def __init__(self, downloads: Downloads, job: DownloadJob) -> None:
        self.downloads, self.job = downloads, job

    def run(self) -> None:
        while True:
            try:
                self.downloads.queue.wait(self.job, WAIT_STEP)
                return
            except WaitTimedOut:
                continue

    def pause(self) -> None:
        self.downloads.pause(self.job)

    def status(self) -> JobStatus:
        return self.job.status()


def _capped(lines: list[str], every: bool, more: str) -> list[str]:
    """The first LISTED of `lines` (all when `every`), then how many more: `more` says
    how to see them, with {n} for the count."""
    if every or len(lines) <= LISTED:
        return lines
    return [*lines[:LISTED], "… " + more.format(n=f"{len(lines) - LISTED:,}")]


def _skipped_lines(paths: list[str], include_all: bool) -> list[str]:
    lines = []
    for path in paths:
        reason = skip_reason(path, include_all) or "not needed"
        hint = "; --all-files fetches it" if reason == EXPORT_REASON else ""
        lines.append(f"skipped {path} ({reason}{hint})")
    return lines


def _print_plan(plan: RepoPlan, include_all: bool, every: bool) -> None:
    """What `download` would fetch, a file a line (the first LISTED unless `every`)."""
    print(
        f"{plan.repo_id} at revision {plan.revision[:12]}: {len(plan.files):,} files, "
        f"{format_bytes(plan.total_bytes)}"
    )
    files = [f"{format_bytes(f.size):>10}  {f.path}" for f in plan.files]
    for line in _capped(files, every, "and {n} more files (--list-all lists them all)"):
        print(line)
    skipped = _skipped_lines([f.path for f in plan.skipped], include_all)
    for line in _capped(skipped, every, "and {n} more skipped (--list-all lists them all)"):
        print(line)


def _list_plan(args: argparse.Namespace) -> int:
    downloads = _downloads()
    try:
        plan = fetch_plan(downloads.config(), args.repo, args.revision, args.all_files)
    finally:
        downloads.shutdown()
    if args.json:
        print(json.dumps({**plan.to_json(), "bytes": plan.total_bytes}))
    else:
        _print_plan(plan, args.all_files, args.list_all)
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    try:
        check_repo_id(args.repo)
    except HubError as exc:
        print(f"draftdeck: {exc}", file=sys.stderr)
        return 2  # a usage error, like argparse's
    if args.list or args.list_all:
        return _list_plan(args)
    downloads = _downloads()
    started = time.monotonic()
    job = downloads.start(args.repo, args.revision, include_all=args.all_files, force=args.force)
    try:
        run_with_progress(_Queued(downloads, job), args.repo)
    finally:
        downloads.shutdown()  # after Ctrl+C: waits until the job has paused
    status = job.status()
    if status.state != DONE:
        why = status.error or (
            "paused; run the same command again to resume"
            if status.state == PAUSED
            else status.state
        )
        print(f"draftdeck: download of {args.repo} did not finish: {why}", file=sys.stderr)
        return 1
    skipped = _skipped_lines(list(status.skipped), args.all_files)
    for line in _capped(skipped, False, "and {n} more skipped (--json lists them all)"):
        print(line, file=sys.stderr)
    for note in status.notes:
        print(note, file=sys.stderr)
    result: dict[str, object] = {
        "repo": args.repo,
        "revision": status.revision,
        "path": status.path,
        "files": status.files_total,
        "bytes": status.total_bytes,
        "skipped": list(status.skipped),
        "notes": list(status.notes),
        "up_to_date": status.up_to_date,
        "seconds": round(time.monotonic() - started, 3),
    }
    if args.json:
        print(json.dumps(result))
    elif status.up_to_date:
        print(
            f"{args.repo} is already installed and up to date in {status.path} (revision "
            f"{(status.revision or '')[:12]}, {status.files_total} files verified); "
            "nothing was fetched (--force downloads it again)"
        )
    else:
        print(
            f"installed {args.repo} ({format_bytes(status.total_bytes)}, "
            f"{status.files_total} files) in {status.path}"
        )
    return 0


def add_parsers(sub: Any) -> None:
    catalog = sub.add_parser(
        "catalog",
        help="known draft packs and targets on the Hub",
        description="List the known draft packs and targets on the Hugging Face Hub: the "
        "curated list and the curated collections (as last listed; --refresh lists them "
        f"now). {HUB_ENV}",
    )
    catalog.add_argument(
        "--refresh",
        action="store_true",
        help="list the curated Hub collections now (cached for offline use)",
    )
    catalog.add_argument("--json", action="store_true", help="print the catalog as JSON")
    catalog.set_defaults(func=cmd_catalog)
    download = sub.add_parser(
        "download",
        help="download a pack into the library (resumes an interrupted download)",
        description="Download a pack from the Hugging Face Hub into the library, every file "
        "checked against the Hub's sha256 or git blob id before the pack is installed in one "
        "step; run it again to resume an interrupted download. Progress on stderr. "
        f"{HUB_ENV}",
    )
    download.add_argument("repo", metavar="REPO_ID", help="the Hub repo, owner/name")
    download.add_argument("--revision", metavar="R", help="branch, tag or commit (default main)")
    download.add_argument(
        "--all-files",
        action="store_true",
        help=f"also fetch files a pack does not need ({SKIPPED_KINDS})",
    )
    download.add_argument(
        "--force",
        action="store_true",
        help="download again even when this revision is installed and its files are intact",
    )
    download.add_argument(
        "--list",
        action="store_true",
        help=f"only list the files a download would fetch (the first {LISTED}) and stop",
    )
    download.add_argument("--list-all", action="store_true", help="as --list, naming every file")
    download.add_argument(
        "--json",
        action="store_true",
        help="last line of stdout: repo, revision, path, files, bytes, up_to_date "
        "(with --list: the plan, every file)",
    )
    download.set_defaults(func=cmd_download)
