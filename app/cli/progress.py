"""Running a long job from the command line: a progress line on stderr every half
second, and Ctrl+C stops the job cleanly (it resumes when run again)."""

from __future__ import annotations

import sys
import threading
from typing import Protocol

from app.core.infra.job_queue import JobProgress
from app.core.infra.units import format_bytes


class _Job(Protocol):
    def run(self) -> object: ...

    def pause(self) -> None: ...

    def status(self) -> JobProgress: ...


def progress_line(name: str, s: JobProgress) -> str:
    eta = f", {s.eta_seconds:.0f} s left" if s.eta_seconds else ""
    return (
        f"{name}: {format_bytes(s.done_bytes)} / {format_bytes(s.total_bytes)} "
        f"({s.fraction:.0%}) {format_bytes(s.speed)}/s{eta} {s.current_file}"
    )


def run_with_progress(job: _Job, name: str) -> None:
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(0.5):
            status = job.status()
            if status.total_bytes and status.done_bytes:
                print(progress_line(name, status), file=sys.stderr)

    printer = threading.Thread(target=report, daemon=True)
    printer.start()
    try:
        job.run()
    except KeyboardInterrupt:
        job.pause()
    finally:
        stop.set()
        printer.join()
