"""Running the pack-making jobs from a terminal, for `draftdeck export` and `draftdeck
verify-export`: Ctrl+C cancels a job and waits for its clean-up, its output lines go to
stderr, and the export environment is created on first use after asking (its size and
folder; `--yes` answers yes, no terminal and no `--yes` creates nothing)."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from typing import Protocol

from app.core.packmaking.custom_code import CustomCodeRefused
from app.core.packmaking.export_env import ExportEnv, plan_export_env, ready_export_env

WAIT_STEP = 0.5  # seconds; short waits let Ctrl+C through (Windows blocks it in a long one)


def say(line: str) -> None:
    """A progress or problem line, on stderr (stdout carries the results)."""
    print(line, file=sys.stderr, flush=True)


def say_code_refused(refused: CustomCodeRefused) -> None:
    """The folder's code, and how to trust it."""
    say(
        f"draftdeck: {refused.message}. Only if you trust where it came from, pass "
        "--trust-remote-code to run it."
    )


class _Job(Protocol):
    def run(self) -> object: ...

    def cancel(self) -> None: ...


class _Lines(Protocol):
    """What the export jobs' statuses have in common: their latest output line."""

    @property
    def line(self) -> str: ...

    @property
    def lines(self) -> int: ...


def add_yes_arg(p: argparse.ArgumentParser) -> None:
    """--yes, as export and verify-export take it: the one question they may ask."""
    p.add_argument(
        "--yes",
        action="store_true",
        help="create the export environment (about 1.3 GB, once) without asking; without a "
        "terminal to ask in, it is created only with --yes",
    )


def add_trust_arg(p: argparse.ArgumentParser) -> None:
    """--trust-remote-code, as export and verify-export take it."""
    p.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model folder's own Python code (auto_map in its config, *.py files) "
        "with your rights; only for a folder you trust. Without it such a folder is refused, "
        "a Hub repo is downloaded without its *.py files, and transformers is kept from "
        "running any of the folder's code",
    )


def run_cancellable(job: _Job) -> bool:
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


def printing_lines(prefix: str, status: Callable[[], _Lines]) -> Callable[[], None]:
    """A listener that prints each new output line of a job's status on stderr."""
    last = [0]

    def on_change() -> None:
        s = status()
        if s.lines != last[0] and s.line:
            last[0] = s.lines
            print(f"{prefix}{s.line}", file=sys.stderr, flush=True)

    return on_change


def export_env_asking(yes: bool, nothing_done: str) -> ExportEnv | None:
    """The ready export environment, built first (after asking) when needed; None when
    the user said no, cancelled, or the build failed (said on stderr, with
    `nothing_done`: "nothing was exported", say). KeyboardInterrupt when Ctrl+C
    cancelled the build (its half-built folder removed)."""
    from app.core.packmaking.export_env_build import DONE, ExportEnvJob

    env = ready_export_env()
    if env is not None:
        return env
    plan = plan_export_env()
    print(plan.describe(), file=sys.stderr)
    if not plan.fits():
        print(f"draftdeck: not enough free space in {plan.folder}", file=sys.stderr)
        return None
    question = "Make it again now? [y/N] " if plan.damaged else "Create it now? [y/N] "
    if not yes and not _confirm(question):
        print(f"draftdeck: {nothing_done} (the export environment is needed)", file=sys.stderr)
        return None
    job = ExportEnvJob(plan)
    job.listen(printing_lines("export environment: ", job.status))
    if not run_cancellable(job):
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
