"""Two clocks for a round: the wall's, for what the user sees, and work's, for what
adaptive drafting judges.

Work seconds are this thread's CPU time, which another process's burst does not add to:
a forward of the fixtures' fast target took 4.3 ms at the median, 9.2 ms at the 90th
percentile by the wall with four bursty processes beside it, and 3.9 and 4.9 ms of CPU
time (measured, 2 cores). The decoding loop and MNN's forwards run on this thread (with
several MNN threads it also waits for the others by spinning, which counts). Windows
counts a thread's CPU time in 15.6 ms ticks, longer than a step: there work is the wall's
time, and judging in pairs (drafting_check.py) is what stands against load.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple

FINE = sys.platform != "win32"  # the thread's CPU time is counted finely enough


def work_seconds() -> float:
    return time.thread_time() if FINE else time.perf_counter()


class Mark(NamedTuple):
    """A moment by both clocks, or the time between two moments (a tuple: a round
    makes a few, and a plain step of a tiny model is 0.1 ms)."""

    wall: float
    work: float

    @staticmethod
    def now() -> Mark:
        return Mark(time.perf_counter(), work_seconds())

    def since(self) -> Mark:
        return Mark(time.perf_counter() - self.wall, work_seconds() - self.work)

    def after(self, spent: Mark) -> Mark:
        return Mark(self.wall + spent.wall, self.work + spent.work)
