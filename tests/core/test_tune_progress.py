"""The pairs a sweep expects in all, from the run rule and the pace so far (made-up
times): the bar is pairs done over them, so it never reads 100 % while pairs remain."""

from __future__ import annotations

from app.core.measure.tune_eta import SweepClock, SweepProgress, expected_pairs
from app.core.measure.tune_plan import SweepPlan

PLAN = SweepPlan(prompts=("a", "b", "c"), budget_seconds=20.0, max_repeats=12)


def _paired(clock: SweepClock, *times: float) -> SweepClock:
    for at in times:
        clock = clock.paired(at)
    return clock


def test_before_the_pace_is_known_each_stage_counts_its_least_rounds() -> None:
    # Four settings and two leaders assumed re-measured, two rounds of three pairs each.
    assert expected_pairs(PLAN, SweepClock(4).started(0.0)) == 6 * 6


def test_the_total_is_what_the_budget_buys_at_the_measured_pace() -> None:
    # A pair a second: rounds of 3 s, seven of them spend the 20 s budget.
    clock = _paired(SweepClock(4).started(0.0), 5.0, 6.0)
    assert expected_pairs(PLAN, clock) == 6 * 7 * 3


def test_finished_stages_count_what_they_ran() -> None:
    # The first setting narrowed after two rounds: the others are expected alike.
    clock = _paired(SweepClock(2).started(0.0), *range(1, 7))
    clock = clock.started(7.0, None)
    assert expected_pairs(PLAN, clock) == 6 + 6 + 2 * 6


def test_a_stage_at_its_planned_end_still_leaves_a_pair_to_come() -> None:
    """One setting (no leaders), its planned rounds done: the runner may yet add a round,
    and only it knows; the total stays one ahead, so the bar holds below 100 %."""
    plan = SweepPlan(prompts=("a", "b", "c"), budget_seconds=1.0, max_repeats=12)
    clock = _paired(SweepClock(1).started(0.0), *range(1, 7))
    total = expected_pairs(plan, clock)
    assert total == 7
    assert SweepProgress(6, total, 0.0).fraction < 1.0
    assert SweepProgress(6, 6, 0.0).fraction == 1.0  # the runner's own end
