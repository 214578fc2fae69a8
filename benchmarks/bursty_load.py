"""A busy desktop's load beside a benchmark: N processes that burn CPU in random bursts.

Each process burns for 0.1-1.5 s, rests for 0.1-1.5 s, and again (drawn at random, seeded
per process), as a browser, a build and a second model come and go. Two steady loops do
not show what bursts do: a measurement that lands in a burst reads slow against one made
just before it.

    with BurstyLoad(4):
        ...  # the measurement
"""

from __future__ import annotations

import multiprocessing as mp
import random
import time
from multiprocessing.synchronize import Event
from types import TracebackType

ON = OFF = (0.1, 1.5)  # seconds a burst, and a rest, lasts


def _burn(seed: int, stop: Event) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        end = time.perf_counter() + rng.uniform(*ON)
        while time.perf_counter() < end:
            pass
        stop.wait(rng.uniform(*OFF))


class BurstyLoad:
    """`processes` bursty processes while the `with` block runs (none: 0)."""

    def __init__(self, processes: int, seed: int = 0) -> None:
        self.processes, self.seed = processes, seed
        # spawn: the same on every platform, and no copy of the caller's loaded models.
        self._context = mp.get_context("spawn")
        self._stop = self._context.Event()
        self._workers: list[mp.process.BaseProcess] = []

    def __enter__(self) -> BurstyLoad:
        for i in range(self.processes):
            worker = self._context.Process(
                target=_burn, args=(self.seed + i, self._stop), daemon=True
            )
            worker.start()
            self._workers.append(worker)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()

    def describe(self) -> str:
        if not self.processes:
            return "quiet (nothing else running on purpose)"
        return (
            f"{self.processes} processes beside it burning CPU in random bursts "
            f"({ON[0]}-{ON[1]} s on, {OFF[0]}-{OFF[1]} s off)"
        )
