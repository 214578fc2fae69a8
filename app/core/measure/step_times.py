"""What a kind of decoding step costs, read from its latest times.

A step's cost is a quantile of its latest times, worked out only when read (a plain step
of a tiny model is 0.1 ms: bookkeeping must stay cheap). The first time of each kind is
left out: MNN clones a module on a shape's first forward (tens of steps' time).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

TIMES_KEPT = 9  # the latest times per kind of step
# A step's cost: the lower quartile of its latest times. Another process only ever slows
# a step, and a length rounds seldom choose keeps its times long: one slowed time should
# not keep rounds from it (it did, on the fast pair: 0.78 of fixed drafting).
LOW_QUANTILE = 0.25


class StepTimes:
    """The latest `kept` times of one kind of step and their `quantile` (the median by
    default)."""

    def __init__(self, quantile: float = 0.5, kept: int = TIMES_KEPT) -> None:
        self.times: deque[float] = deque(maxlen=kept)
        self.seen = False
        self.quantile = quantile
        self._typical: float | None = None

    def add(self, seconds: float) -> None:
        if self.seen:
            self.times.append(seconds)
            self._typical = None
        self.seen = True

    def typical(self) -> float | None:
        if self._typical is None and self.times:
            ordered = sorted(self.times)
            self._typical = ordered[int(self.quantile * (len(ordered) - 1))]
        return self._typical


def costs_by_length(measured: dict[int, float], longest: int) -> list[float]:
    """Seconds of each length 1..`longest`: the length's own where measured, else a
    least-squares line through those measured (flat until two are: a memory-bound
    verify costs one step at any length); never less than a shorter one's (noise)."""
    xs, ys = list(measured), list(measured.values())
    slope, mx, my = 0.0, (sum(xs) / len(xs) if xs else 0.0), (sum(ys) / len(ys) if ys else 0.0)
    if len(measured) >= 2:
        sxx = sum((x - mx) ** 2 for x in xs)
        sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
        slope = max(sxy / sxx, 0.0)
    costs, floor = [], 0.0
    for length in range(1, longest + 1):
        cost = measured.get(length, my + slope * (length - mx))
        floor = max(floor, cost)
        costs.append(floor)
    return costs


@dataclass(slots=True)  # not frozen: a frozen one costs microseconds a round to make
class RoundMeasure:
    """What one round measured, for adaptive drafting. Seconds are work seconds (this
    thread's CPU time where the platform counts it finely: a burst of another process's
    work does not add to them) unless said otherwise."""

    drafted: int  # proposals the verify checked (0, with no draft forward: a plain step)
    accepted: int
    emitted: int
    target_seconds: float  # the verify, or the plain step
    draft_seconds: float = 0.0
    draft_forwards: int = 0
    # The whole round as a reply sees it (the decoding loop's own work included, which on
    # a tiny model costs as much as a forward); None: the draft's and the target's time.
    round_seconds: float | None = None
    # The draft forwards after the round's first (which feeds what the draft has not
    # seen, dearer): what one more drafted token costs; None: the draft's time over its
    # forwards.
    later_seconds: float | None = None
    wall_seconds: float | None = None  # the whole round by the wall clock; None: as work
    cloned: bool = False  # a model fed a length it never had (MNN cloned a module)

    @property
    def plain(self) -> bool:
        return self.drafted == 0 and self.draft_forwards == 0

    @property
    def seconds(self) -> float:
        if self.round_seconds is None:
            return self.draft_seconds + self.target_seconds
        return self.round_seconds

    @property
    def wall(self) -> float:
        return self.seconds if self.wall_seconds is None else self.wall_seconds
