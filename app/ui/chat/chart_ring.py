"""The charts' sample store: a fixed-size FIFO of (x, y) in numpy arrays, so a long chat
costs the plots a bounded redraw; what stood before the last reply, and a saved reply's
tallies by draft position."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.engine.protocol import Round

CAPACITY = 2048  # samples kept per series


class Ring:
    """A fixed-size FIFO of (x, y) samples."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.x = np.zeros(capacity)
        self.y = np.zeros(capacity)
        self.count = 0

    def append(self, x: float, y: float) -> None:
        if self.count == len(self.x):
            self.x[:-1], self.y[:-1] = self.x[1:], self.y[1:]
            self.count -= 1
        self.x[self.count], self.y[self.count] = x, y
        self.count += 1

    def clear(self) -> None:
        self.count = 0

    def data(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        return self.x[: self.count], self.y[: self.count]


def add_tallies(into: list[int], counts: object) -> None:
    """Add a saved reply's per-position counts (grown as needed; anything else skipped)."""
    if not isinstance(counts, list):
        return
    into += [0] * (len(counts) - len(into))
    for index, count in enumerate(counts):
        if isinstance(count, int):
            into[index] += count


@dataclass(frozen=True)
class Before:
    """The charts' state before a reply: where its time began, the tallies by draft
    position, the rolling rounds and the plain reference speed."""

    offset: float
    reached: list[int]
    accepted: list[int]
    recent: list[Round]
    reference: float | None
