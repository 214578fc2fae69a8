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
