"""Tell a stuck worker from a busy one, from outside the worker.

A heartbeat sent by a thread inside the worker cannot work: pymnn holds the GIL during
its native calls (measured: a Python thread ticking every 10 ms saw a 2.1 s gap during
one 8000-token prefill of the tiny fixture target; a big prompt on a real model takes
minutes), so such a thread stalls exactly when a long prefill runs. What a busy worker
always shows is CPU time advancing; a stopped (SIGSTOP) or deadlocked one uses none.
So the client watches the process itself: stopped means stuck at once; no event and no
CPU time for `stall_seconds` while a request is pending means stuck.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psutil

DEFAULT_STALL_SECONDS = 20.0
_STOPPED = (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)


class Watchdog:
    def __init__(
        self,
        pid: int,
        stall_seconds: float = DEFAULT_STALL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stall_seconds = stall_seconds
        self._clock = clock
        self._process = psutil.Process(pid)  # not yet reaped by Popen: the pid is its own
        try:
            self._cpu = self._cpu_seconds()
        except psutil.Error:  # already a zombie on some systems: its exit tells
            self._cpu = 0.0
        self._progress_at = clock()

    def progress(self) -> None:
        """The worker sent an event, or was given a request: the stall count restarts."""
        self._progress_at = self._clock()

    def stuck(self) -> str | None:
        """Why the worker is stuck (it stopped, or made no progress for stall_seconds),
        or None while it works or has already exited (its exit is reported instead)."""
        try:
            status = self._process.status()
            cpu = self._cpu_seconds()
        except psutil.Error:
            return None
        if status in _STOPPED:
            return "was stopped (a SIGSTOP or a debugger) and would never answer"
        now = self._clock()
        if cpu > self._cpu:
            self._cpu, self._progress_at = cpu, now
        elif now - self._progress_at >= self.stall_seconds:
            return (
                f"made no progress for {self.stall_seconds:g} s (no event and no CPU time: "
                "a deadlock)"
            )
        return None

    def _cpu_seconds(self) -> float:
        times = self._process.cpu_times()
        return float(times.user + times.system)
