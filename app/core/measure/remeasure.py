"""When a setting's rounds stop, and what a leader measured again says of its first pass.

A setting runs rounds until its uplift's 95 % interval is narrow enough
(`SweepPlan.target_half_width`), its time budget is spent or `max_repeats` rounds ran.
A leader is measured again at the end (tune_runner); when the fresh interval and the
first pass's do not even overlap (0.83x (0.73-0.88) then 0.64x (0.57-0.72) on a busy
machine), the machine's speed changed between them: neither is a 95 % interval of one
steady machine. Then the re-measure keeps going to its budget rather than stop at the
first narrow interval, and its figures say the machine was disturbed instead of "95 %".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.core.measure.intervals import TIMES, TO, MedianInterval, median_interval, overlaps
from app.core.measure.tune_plan import SweepPlan


def interval_target_met(ratios: Sequence[float], plan: SweepPlan) -> bool:
    """The pair ratios' interval reaches 95 % and is as narrow as the plan asks."""
    if not ratios:
        return False
    interval = median_interval(list(ratios))
    return interval.met_level and interval.relative_half_width <= plan.target_half_width


def _figure(uplift: float, low: float, high: float) -> str:
    return f"{uplift:.2f}{TIMES} ({low:.2f}{TO}{high:.2f})"


def disturbance(first_pass: Mapping[str, Any] | None, ratios: Sequence[float]) -> str | None:
    """Why the figures cannot be read as 95 % intervals (None: nothing to say): the
    interval of `ratios` (a leader measured again) and its `first_pass`'s (the summary
    keys uplift, uplift_low, uplift_high) do not overlap."""
    if not first_pass or not ratios:
        return None
    try:
        before = MedianInterval(
            float(first_pass["uplift"]),
            float(first_pass["uplift_low"]),
            float(first_pass["uplift_high"]),
            0.0,
            0,
        )
    except (KeyError, TypeError, ValueError):  # a first pass without its interval
        return None
    now = median_interval(list(ratios))
    if overlaps(before, now):
        return None
    return (
        "the machine was disturbed while measuring: the first pass gave "
        f"{_figure(before.median, before.low, before.high)}, measured again "
        f"{_figure(now.median, now.low, now.high)}; intervals that do not overlap are not "
        "two 95 % intervals of one steady machine"
    )


def rounds_done(plan: SweepPlan, rounds: int, met: bool, spent: float, disturbed: bool) -> bool:
    """Whether a setting stops after `rounds` rounds in `spent` seconds: not before
    `min_rounds`; then once its interval is narrow enough (`met`), unless it disagrees
    with its first pass (`disturbed`: then only the budget or `max_repeats` end it)."""
    if rounds < plan.min_rounds:
        return False
    narrow = met and not disturbed
    return narrow or spent >= plan.budget_seconds or rounds >= plan.max_repeats
