"""Figures every transfer shares: speed over a recent window, room to keep free."""

from __future__ import annotations

import time
from collections.abc import Callable

SPEED_WINDOW = 3.0  # seconds of samples behind the speed figure


def disk_margin(total: int) -> int:
    """Room to keep free besides a transfer: 2 % of it, at least 100 MB."""
    return max(total // 50, 100 * 1024 * 1024)


class SpeedMeter:
    """Bytes per second over the last few seconds (not since the start, which would
    hide a stall behind an early burst). Not thread-safe: callers hold their lock."""

    def __init__(
        self, window: float = SPEED_WINDOW, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window = window
        self.clock = clock  # seconds; tests drive a fake one
        self._samples: list[tuple[float, int]] = []

    def reset(self) -> None:
        self._samples = []

    def add(self, done: int, now: float | None = None) -> float:
        """Record that `done` bytes are done by now; return the current speed."""
        now = self.clock() if now is None else now
        self._samples.append((now, done))
        # The oldest sample stays when it is the only one before this: reports further
        # apart than the window (a big block over a slow cable) still give a rate.
        while len(self._samples) > 2 and now - self._samples[0][0] > self.window:
            self._samples.pop(0)
        first_t, first_done = self._samples[0]
        return (done - first_done) / (now - first_t) if now > first_t else 0.0


class TransferFigures:
    """Figures derived from a transfer's status (mixed into the frozen status
    dataclasses of downloads and pushes, which hold these three fields)."""

    done_bytes: int
    total_bytes: int
    speed: float  # bytes per second over the last few seconds

    @property
    def fraction(self) -> float:
        return self.done_bytes / self.total_bytes if self.total_bytes else 0.0

    @property
    def eta_seconds(self) -> float | None:
        left = self.total_bytes - self.done_bytes
        return left / self.speed if self.speed > 0 and left > 0 else None
