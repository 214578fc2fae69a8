"""Pearson's chi-square tests for the sampling tests, on the standard library alone.

With fixed seeds every statistic is a fixed number, so a test that uses these is
deterministic: the threshold says how unlikely a correct sampler is to fail it for
some other set of seeds, not a chance that this run fails.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable


def chi2_sf(stat: float, dof: int) -> float:
    """P(X >= stat) for X ~ chi-square(dof): the regularised upper incomplete gamma."""
    a, x = dof / 2.0, stat / 2.0
    if x <= 0.0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        n = a
        while term > total * 1e-16:
            n += 1.0
            term *= x / n
            total += term
        return 1.0 - total * math.exp(log_front)
    b, c, d = x + 1.0 - a, 1e300, 1.0 / (x + 1.0 - a)
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = 1.0 / (an * d + b or 1e-300)
        c = b + an / c or 1e-300
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h * math.exp(log_front)


def same_distribution_p_value(a: Counter[Hashable], b: Counter[Hashable]) -> float:
    """Test of homogeneity: were the two samples drawn from one distribution? Outcomes
    expected fewer than 5 times in either sample are pooled into one cell."""
    na, nb = sum(a.values()), sum(b.values())
    total = na + nb
    cells: list[tuple[float, float]] = []
    rare_a = rare_b = 0.0
    for key in set(a) | set(b):
        share = (a[key] + b[key]) / total
        if min(na, nb) * share < 5.0:
            rare_a, rare_b = rare_a + a[key], rare_b + b[key]
        else:
            cells.append((a[key], b[key]))
    if rare_a + rare_b:
        cells.append((rare_a, rare_b))
    if len(cells) < 2:
        return 1.0
    stat = 0.0
    for in_a, in_b in cells:
        both = in_a + in_b
        for seen, n in ((in_a, na), (in_b, nb)):
            expected = n * both / total
            stat += (seen - expected) ** 2 / expected
    return chi2_sf(stat, len(cells) - 1)
