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
from app.core.hub.job import DONE, PAUSED, DownloadJob, JobStatus
from app.core.hub.plan import SKIPPED_KINDS, check_repo_id
from app.core.infra.errors import HubError
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.units import format_bytes
from app.core.pack.library import Library

WAIT_STEP = 0.5  # seconds; short waits let Ctrl+C through (Windows blocks it in a long one)


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


def cmd_download(args: argparse.Namespace) -> int:
    try:
        check_repo_id(args.repo)
    except HubError as exc:
        print(f"draftdeck: {exc}", file=sys.stderr)
        return 2  # a usage error, like argparse's
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
    for skipped in status.skipped:
        print(
            f"skipped {skipped} (not needed to run the pack; --all-files fetches it)",
            file=sys.stderr,
        )
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
    catalog = sub.add_parser("catalog", help="known draft packs and targets on the Hub")
    catalog.add_argument(
        "--refresh",
        action="store_true",
        help="list the curated Hub collections now (cached for offline use)",
    )
    catalog.add_argument("--json", action="store_true")
    catalog.set_defaults(func=cmd_catalog)
    download = sub.add_parser(
        "download", help="download a pack into the library (resumes an interrupted download)"
    )
    download.add_argument("repo", metavar="REPO_ID")
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
        "--json",
        action="store_true",
        help="last line of stdout: repo, revision, path, files, bytes, up_to_date",
    )
    download.set_defaults(func=cmd_download)
