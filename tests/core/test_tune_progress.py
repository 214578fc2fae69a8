"""The pairs a sweep expects in all and its time left, from the run rule and the pace
so far, and what is shown of them (made-up times): a pace from a setting's warm-up and
its first pair, a share done that never goes back, a time left that never jumps up."""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Sequence

import pytest

from app.core.measure.tune_eta import (
    RISE_LIMIT,
    RISE_SECONDS,
    ShownEstimate,
    SweepClock,
    SweepProgress,
    expected_leaders,
    expected_pairs,
    pair_seconds,
    seconds_left,
)
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


# -- the pace, known early -------------------------------------------------------------


def test_a_settings_warm_up_gives_the_pace_before_any_pair() -> None:
    """Set up at 5 s, its warm-up foretelling 1.5 s a pair: a figure at once, where the
    sweep once said "estimating…" until two pairs of a setting were done (100 s)."""
    clock = SweepClock(4).started(0.0).ready(5.0, 1.5)
    assert pair_seconds(clock) == 1.5
    left = seconds_left(PLAN, clock, 5.0)
    # This setting's rounds (the budget buys 5 of 4.5 s), then 3 settings and 2 leaders
    # as long as it is planned: setup 5 s, then those rounds.
    assert left == pytest.approx(5 * 4.5 + 5 * (5.0 + 5 * 4.5))
    assert seconds_left(PLAN, SweepClock(4).started(0.0).ready(5.0), 5.0) is None


def test_a_settings_first_pair_is_timed_from_its_setup() -> None:
    """The load and warm-up are not a pair's: timed from the setup's end, one pair gives
    the pace (a first pair's time with them in it once said 400 s of a 150 s sweep)."""
    clock = SweepClock(4).started(0.0).ready(10.0, 4.0).paired(11.5)
    assert pair_seconds(clock) == 1.5  # measured now, not the warm-up's guess
    clock = clock.paired(13.5).started(14.0).ready(20.0).paired(21.0)
    assert pair_seconds(clock) == 1.5  # 1.5, 2.0 and 1.0: their median


# -- what is shown ------------------------------------------------------------------------


def _shown(steps: Sequence[tuple[float, float | None]]) -> list[ShownEstimate]:
    shown, seen = ShownEstimate(), []
    for elapsed, left in steps:
        shown = shown.next(elapsed, left)
        seen.append(shown)
    return seen


def _moves_forward(steps: Sequence[tuple[float, float | None]], seen: list[ShownEstimate]) -> None:
    """The share never goes back nor reaches 100 % before the end; the whole sweep's
    estimate never rises by more than a tenth of itself in RISE_SECONDS, so the time left
    never jumps up, however often it is reported."""
    for (at, _), (then, _), before, after in zip(steps, steps[1:], seen, seen[1:], strict=False):
        assert after.share >= before.share
        if before.total is not None and after.total is not None:
            allowed = RISE_LIMIT * min(1.0, (then - at) / RISE_SECONDS)
            assert after.total <= before.total * (1 + allowed) + 1e-9
    assert all(s.share < 1.0 for s in seen)
    for (elapsed, _), s in zip(steps, seen, strict=True):
        if s.total is not None:
            assert s.total >= elapsed


def test_a_steady_pace_is_shown_as_measured() -> None:
    # 200 s of work, a report every 2 s, each estimate right: shown as it is.
    steps: list[tuple[float, float | None]] = [(2.0, None)]
    steps += [(t, 200.0 - t) for t in range(4, 200, 2)]
    seen = _shown(steps)
    _moves_forward(steps, seen)
    assert seen[0].total is None and seen[0].share == 0.0  # nothing measured: no figure
    assert seen[1].seconds_left(4.0) == pytest.approx(196.0)  # then at once, as measured
    for (elapsed, left), s in zip(steps[1:], seen[1:], strict=True):
        assert s.seconds_left(elapsed) == pytest.approx(left)
        assert s.share == pytest.approx(elapsed / 200.0)


def test_a_noisy_pace_moves_forward_and_stays_near_the_truth() -> None:
    """Estimates off by -40 % to +60 % at random (a busy machine's pairs): the share
    only grows, and the time left shown is nearer the truth than the raw estimates."""
    noise = random.Random(46)
    steps = [(float(t), (300.0 - t) * noise.uniform(0.6, 1.6)) for t in range(3, 300, 3)]
    seen = _shown(steps)
    _moves_forward(steps, seen)
    truth = [300.0 - t for t, _ in steps]
    shown = [s.seconds_left(t) or 0.0 for (t, _), s in zip(steps, seen, strict=True)]
    raw = [left or 0.0 for _, left in steps]
    error = statistics.fmean(abs(a - b) for a, b in zip(shown, truth, strict=True))
    raw_error = statistics.fmean(abs(a - b) for a, b in zip(raw, truth, strict=True))
    assert error < 0.75 * raw_error


def test_more_work_found_late_is_shown_rising_gently_then_in_full() -> None:
    """At 80 s of a 100 s estimate, the leaders to measure again add 100 s: the time left
    does not leap from about 20 s to 120 s at once; within a minute and a half it says it."""
    steps = [(float(t), 100.0 - t) for t in range(2, 81, 2)]
    steps += [(float(t), 200.0 - t) for t in range(82, 200, 2)]
    seen = _shown(steps)
    _moves_forward(steps, seen)
    at_80 = seen[len(range(2, 81, 2)) - 1]
    after = seen[len(range(2, 81, 2))]
    assert at_80.seconds_left(80.0) == pytest.approx(20.0)
    left_at_82 = after.seconds_left(82.0)
    assert left_at_82 is not None and left_at_82 < 40.0  # a part of the way, not 118 s
    settled = seen[len(range(2, 81, 2)) + 45]  # 90 s later: a tenth per 10 s caught up
    assert settled.total == pytest.approx(200.0, rel=0.05)


def test_an_estimate_that_grows_slowly_is_not_shown_rising_at_every_report() -> None:
    """A busy machine's estimate growing 1 % a report (100 s to 130 s, a report a second):
    the time left shown rose a little at every report, a clock running backwards. Now it
    counts down a second a second while the estimate is within a tenth of the one shown,
    then catches up with it, the time left standing rather than rising."""
    steps = [(float(t), 100.0 * 1.01**t - t) for t in range(1, 27)]
    seen = _shown(steps)
    _moves_forward(steps, seen)
    lefts = [s.seconds_left(t) or 0.0 for (t, _), s in zip(steps, seen, strict=True)]
    assert lefts[:10] == pytest.approx([100.0 - i for i in range(10)])
    assert all(b <= a + 0.5 for a, b in itertools.pairwise(lefts))
    caught, before = seen[-1].total, seen[9].total
    assert caught is not None and before is not None and caught > before  # it catches up


def test_the_leaders_to_measure_again_are_foreseen_from_those_finished() -> None:
    """Five settings of which the two finished both lead: halfway between the two and all
    five foreseen (a fast pair's Quick settings all tied, and the estimate grew at each),
    so the estimate counts four re-measures now rather than rise by them later."""
    clock = SweepClock(5).started(0.0).paired(5.0, 1).started(10.0).paired(15.0, 2)
    clock = clock.started(20.0)
    assert expected_leaders(clock) == 4
    assert expected_leaders(SweepClock(5).started(0.0)) == 2  # nothing finished yet
    one_of_three = SweepClock(5, (0.0, 10.0, 20.0, 30.0), leaders=1)
    assert expected_leaders(one_of_three) == 2
    assert expected_leaders(SweepClock(1).started(0.0)) == 0  # nothing to tell apart
