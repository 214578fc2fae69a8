"""Running a program of the export environment (pip, llmexport, a torch script) as a
child process whose output lines are reported as they come and which a cancel stops
whole.

The child gets a process group (a session on POSIX) of its own: Ctrl+C in a terminal then
reaches only DraftDeck, which decides what to stop, and a cancel kills the child with
everything it started (pip's build backends, llmexport's converter).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.processes import no_window_flags

TAIL_LINES = 40  # kept for the error message of a failed run


class ProcessCancelled(Exception):
    """The run was cancelled; the child and its group are gone."""


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    tail: tuple[str, ...]  # the last lines of its output (stdout and stderr merged)


class StreamedProcess:
    """One child process at a time, cancellable from any thread.

    `run` blocks the calling thread until the child ends, calling `on_line` (from that
    thread) for each line of its merged output. `cancel` (any thread) kills the child's
    whole group; `run` then raises ProcessCancelled. A cancel before `run` makes `run`
    raise at once without starting anything.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        with self._lock:
            return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            proc = self._proc
        if proc is not None:
            _kill_group(proc)

    def run(
        self,
        cmd: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        on_line: Callable[[str], None],
    ) -> ProcessResult:
        tail: list[str] = []
        with self._lock:
            if self._cancelled:
                raise ProcessCancelled
            self._proc = subprocess.Popen(
                list(cmd),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=os.name == "posix",
                creationflags=no_window_flags() | _new_group_flag(),
            )
            proc = self._proc
        try:
            assert proc.stdout is not None
            for raw in iter(proc.stdout.readline, b""):
                for line in output_lines(raw.decode("utf-8", errors="replace")):
                    if tail and tail[-1] == line:
                        continue  # a spinner's frames, or a bar that did not move
                    tail.append(line)
                    del tail[:-TAIL_LINES]
                    on_line(line)
            code = proc.wait()
        finally:
            _kill_group(proc)  # nothing it started outlives it (a failed or cancelled run)
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            with self._lock:
                self._proc = None
        if self.cancelled:
            raise ProcessCancelled
        return ProcessResult(code, tuple(tail))


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_SPINNER = re.compile(r"^[\u2800-\u28ff]\s*")  # yaspin's braille frames


def output_lines(text: str) -> list[str]:
    """The lines a terminal would show of `text`: split at carriage returns too (progress
    bars and spinners redraw one line), without colour codes or spinner frames."""
    lines = (_SPINNER.sub("", _ANSI.sub("", part)).strip() for part in re.split(r"[\r\n]", text))
    return [line for line in lines if line]


def _new_group_flag() -> int:
    return getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if sys.platform != "win32":  # (a platform check mypy narrows: Windows has no killpg)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # gone already
            os.killpg(proc.pid, signal.SIGKILL)
        return
    if proc.poll() is None:  # Windows: taskkill /T takes the children too
        subprocess.run(
            ["taskkill", "/F", "/T", "/PID", str(proc.pid)],
            capture_output=True,
            creationflags=no_window_flags(),
        )
