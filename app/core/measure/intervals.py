"""Run-to-run statistics for measured speeds: the median's 95 % interval and variation.

The interval for a median is distribution-free, built from order statistics: with the
values sorted, x(1) <= ... <= x(n), the interval [x(k), x(n+1-k)] holds the true median
with probability 1 - 2 * P(B <= k - 1), B ~ Binomial(n, 1/2), whatever the values'
distribution (they only need to be independent draws). k is the largest rank that keeps
that probability at least 95 %. No randomness, no resampling: the same values give the
same interval. Fewer than 6 values cannot reach 95 % (6 gives 96.9 % with k = 1); then
the interval is the full range and `level` says how much less than 95 % it holds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

LEVEL = 0.95
MIN_VALUES_FOR_LEVEL = 6  # the fewest values whose full range is a 95 % interval
# The times sign and en dash of "95 % interval 0.70-0.97x", by name (RUF001).
TIMES = "\N{MULTIPLICATION SIGN}"
TO = "\N{EN DASH}"


@dataclass(frozen=True)
class MedianInterval:
    median: float
    low: float
    high: float
    level: float  # the coverage this interval actually has (>= LEVEL when `met_level`)
    n: int

    @property
    def met_level(self) -> bool:
        return self.level >= LEVEL

    @property
    def relative_half_width(self) -> float:
        """Half the interval's width as a fraction of the median (0.05 = +-5 %)."""
        return (self.high - self.low) / 2 / self.median if self.median else math.inf

    def excludes(self, value: float) -> bool:
        """True when `value` lies below the interval (the figure beats it beyond noise)."""
        return self.low > value


def _binomial_cdf(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n


def median_interval(values: list[float], level: float = LEVEL) -> MedianInterval:
    """The median of `values` and its distribution-free interval (see the module notes)."""
    if not values:
        raise ValueError("no values")
    xs = sorted(values)
    n = len(xs)
    alpha = 1 - level
    k = 0  # 1-based rank of the lower end; 0 = none reaches the level
    while k + 1 <= n // 2 and _binomial_cdf(k, n) <= alpha / 2:
        k += 1
    if k == 0:
        coverage = 1 - 2 * _binomial_cdf(0, n) if n > 1 else 0.0
        return MedianInterval(statistics.median(xs), xs[0], xs[-1], coverage, n)
    coverage = 1 - 2 * _binomial_cdf(k - 1, n)
    return MedianInterval(statistics.median(xs), xs[k - 1], xs[n - k], coverage, n)


def coefficient_of_variation(values: list[float]) -> float | None:
    """Sample standard deviation over the mean (0.05 = runs vary by about 5 %)."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else None


def overlaps(a: MedianInterval, b: MedianInterval) -> bool:
    return a.low <= b.high and b.low <= a.high


def level_words(level: float) -> str:
    """The level an interval really has: "95 %" once it reaches LEVEL; below, its own,
    rounded down so that it never claims more ("88 %": 5 pairs give 93.75 %, "93 %")."""
    if level >= LEVEL:
        return f"{LEVEL:.0%}".replace("%", " %")
    return f"{math.floor(level * 100 + 1e-9):.0f} %"


def interval_words(
    low: float, high: float, level: float, disturbed: bool = False, bounds: str | None = None
) -> str:
    """The one wording of an interval, wherever one is shown: "95 % interval
    0.70-0.97x" (en dash, times sign); with too few pairs for 95 %, the level it has in
    the same form, "88 % interval 0.70-0.97x"; measured again on a machine whose speed
    changed in between (remeasure.disturbance), no level at all: "interval 0.70-0.97x
    while the machine was disturbed (not 95 %)". `bounds` words the two ends otherwise
    ("+12% to +40%")."""
    ends = bounds if bounds is not None else f"{low:.2f}{TO}{high:.2f}{TIMES}"
    if disturbed:
        return f"interval {ends} while the machine was disturbed (not {level_words(LEVEL)})"
    return f"{level_words(level)} interval {ends}"
