"""`draftdeck export`: make an MNN pack from a Hugging Face model with MNN's exporter,
run in the separate export environment (created on first use, after asking)."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.cli.arg_types import whole_number
from app.core.packmaking.export_checks import (
    BITS,
    ROLES,
    ExportRefused,
    ExportSettings,
    plan_export,
)
from app.core.packmaking.export_env import ExportEnv, plan_export_env, ready_export_env

if TYPE_CHECKING:
    from app.core.packmaking.export_run import ExportJob

WAIT_STEP = 0.5  # seconds; short waits let Ctrl+C through (Windows blocks it in a long one)
REFUSED, CANCELLED = 2, 130


class _Job(Protocol):
    def run(self) -> object: ...

    def cancel(self) -> None: ...


class _Lines(Protocol):
    """What the export jobs' statuses have in common: their latest output line."""

    @property
    def line(self) -> str: ...

    @property
    def lines(self) -> int: ...


def _run_cancellable(job: _Job) -> bool:
    """Run `job` on a thread of its own; Ctrl+C cancels it and waits until it has cleaned
    up. Whether it ran to its end (done or failed) without a cancel."""
    ended = threading.Event()

    def work() -> None:
        try:
            job.run()
        finally:
            ended.set()

    # Waited for with an Event, not Thread.join: a join that Ctrl+C interrupts can leave
    # the thread looking finished (CPython 3.11), and the exit would then cut the clean-up.
    threading.Thread(target=work, name="draftdeck-export").start()
    try:
        while not ended.wait(WAIT_STEP):
            pass
    except KeyboardInterrupt:
        print("draftdeck: cancelling…", file=sys.stderr, flush=True)
        job.cancel()
        _wait_through_interrupts(ended)
        return False
    return True


def _wait_through_interrupts(ended: threading.Event) -> None:
    """Wait for the clean-up to end, whatever more Ctrl+C come meanwhile."""
    while True:
        try:
            if ended.wait(WAIT_STEP):
                return
        except KeyboardInterrupt:
            continue


def _printing_lines(prefix: str, status: Callable[[], _Lines]) -> Callable[[], None]:
    """A listener that prints each new output line of a job's status on stderr."""
    last = [0]

    def on_change() -> None:
        s = status()
        if s.lines != last[0] and s.line:
            last[0] = s.lines
            print(f"{prefix}{s.line}", file=sys.stderr, flush=True)

    return on_change


def _export_env(yes: bool) -> ExportEnv | None:
    """The ready export environment, built first (after asking) when needed; None when
    the user said no, cancelled, or the build failed (said on stderr)."""
    from app.core.packmaking.export_env_build import DONE, ExportEnvJob

    env = ready_export_env()
    if env is not None:
        return env
    plan = plan_export_env()
    print(plan.describe(), file=sys.stderr)
    if not plan.fits():
        print(f"draftdeck: not enough free space in {plan.folder}", file=sys.stderr)
        return None
    if not yes and not _confirm("Create it now? [y/N] "):
        print("draftdeck: nothing was exported (the export environment is needed)", file=sys.stderr)
        return None
    job = ExportEnvJob(plan)
    job.listen(_printing_lines("export environment: ", job.status))
    if not _run_cancellable(job):
        print("draftdeck: cancelled; the half-built environment was removed", file=sys.stderr)
        raise KeyboardInterrupt
    if job.status().state != DONE:
        print(f"draftdeck: {job.status().error}", file=sys.stderr)
        return None
    return job.env()


def _confirm(question: str) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        print("draftdeck: pass --yes to create it without asking", file=sys.stderr)
        return False
    return input(question).strip().lower() in ("y", "yes")


def cmd_export(args: argparse.Namespace) -> int:
    from app.core.packmaking.export_run import ExportJob, source_folder

    settings = ExportSettings(bits=args.bits, block=args.block, role=args.role)
    out = Path(args.out)
    try:
        plan = plan_export(source_folder(args.source), out, settings, args.adjust)
    except ExportRefused as exc:
        flags = f" (--block {exc.block}, or --adjust)" if exc.block is not None else ""
        print(f"draftdeck: {exc.message}{flags}", file=sys.stderr)
        return REFUSED
    for note in plan.adjusted:
        print(f"draftdeck: {note}", file=sys.stderr)
    try:
        env = _export_env(args.yes)
    except KeyboardInterrupt:
        return CANCELLED
    if env is None:
        return 1
    job = ExportJob(env, plan)
    job.listen(_printing_lines("", job.status))
    return run_export(job)


def run_export(job: ExportJob) -> int:
    """Run `job` until it ends or Ctrl+C cancels it, saying how it ended; the exit code."""
    from app.core.packmaking.export_run import CANCELLED as EXPORT_CANCELLED
    from app.core.packmaking.export_run import DONE

    plan = job.plan
    ran = _run_cancellable(job)
    status = job.status()
    if status.state == EXPORT_CANCELLED:
        print(f"draftdeck: export cancelled; nothing was left in {plan.out}", file=sys.stderr)
        return CANCELLED
    if not ran:  # Ctrl+C came after the exporter had finished: the job ran to its end
        print("draftdeck: too late to cancel: the export had finished", file=sys.stderr)
    if status.state != DONE:
        print(f"draftdeck: {status.error}", file=sys.stderr)
        return 1
    info = job.bundle()
    print(
        f"made {info.path} ({plan.source.architecture or info.model_type}, "
        f"{plan.settings.bits}-bit, block {plan.settings.block}, {plan.settings.role})"
    )
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="make an MNN pack from a Hugging Face model folder or repo (MNN's exporter, "
        "in an environment DraftDeck creates on first use)",
    )
    p.add_argument("source", metavar="HF_FOLDER_OR_REPO")
    p.add_argument("--out", required=True, metavar="DIR", help="a new or empty folder")
    p.add_argument(
        "--bits",
        type=int,
        choices=BITS,
        default=4,
        help=f"{', '.join(map(str, BITS))} (default 4; what the exporter writes)",
    )
    p.add_argument(
        "--block",
        type=whole_number(0),
        default=128,
        metavar="K",
        help="quantization block (default 128; 0 = one per row); must divide the model's sizes",
    )
    p.add_argument("--role", choices=ROLES, default="draft", help="draft packs get config_cpu.json")
    p.add_argument(
        "--adjust",
        action="store_true",
        help="use the largest block that fits instead of refusing one that does not",
    )
    p.add_argument(
        "--yes", action="store_true", help="create the export environment without asking"
    )
    p.set_defaults(func=cmd_export)
