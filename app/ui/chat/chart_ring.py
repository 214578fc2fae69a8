"""The charts' sample store: a fixed-size FIFO of (x, y) in numpy arrays, so a long chat
costs the plots a bounded redraw."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

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
