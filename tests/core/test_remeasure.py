"""A leader measured again that disagrees with its first pass beyond their intervals:
said as a disturbed machine, measured on to the budget, and never shown as two 95 %
intervals. The run samples here are made up."""

from __future__ import annotations

from app.core.measure.remeasure import disturbance, interval_target_met, rounds_done
from app.core.measure.tune_plan import Setting, SweepPlan
from app.core.measure.tune_results import SettingResult, verdict_sentence

PLAN = SweepPlan(prompts=("a", "b", "c"), budget_seconds=20.0, max_repeats=12)
# The user's busy machine: 0.83x (0.73-0.88) first, then ratios near 0.64x.
FIRST = {"uplift": 0.83, "uplift_low": 0.73, "uplift_high": 0.88, "runs": 6, "repeats": 2}
AGAIN = [0.57, 0.60, 0.63, 0.64, 0.65, 0.68, 0.72]


def test_intervals_that_do_not_overlap_say_the_machine_was_disturbed() -> None:
    said = disturbance(FIRST, AGAIN)
    assert said is not None and said.startswith("the machine was disturbed while measuring")
    assert "0.83\N{MULTIPLICATION SIGN} (0.73\N{EN DASH}0.88)" in said
    assert "measured again 0.64\N{MULTIPLICATION SIGN} (0.57\N{EN DASH}0.72)" in said
    assert "not two 95 % intervals" in said


def test_overlapping_or_missing_first_passes_say_nothing() -> None:
    assert disturbance(FIRST, [0.80, 0.82, 0.84, 0.85, 0.86, 0.87]) is None
    assert disturbance(None, AGAIN) is None
    assert disturbance({"uplift": 0.83}, AGAIN) is None  # saved before intervals
    assert disturbance(FIRST, []) is None


def test_a_disturbed_re_measure_keeps_measuring_to_its_budget() -> None:
    narrow = [0.64] * 6
    assert interval_target_met(narrow, PLAN)
    assert rounds_done(PLAN, 2, met=True, spent=3.0, disturbed=False)
    assert not rounds_done(PLAN, 2, met=True, spent=3.0, disturbed=True)
    assert rounds_done(PLAN, 5, met=True, spent=20.0, disturbed=True)  # the budget
    assert rounds_done(PLAN, 12, met=True, spent=3.0, disturbed=True)  # the round limit
    assert not rounds_done(PLAN, 1, met=True, spent=30.0, disturbed=False)  # min rounds


def test_a_disturbed_figure_is_not_called_a_95_percent_interval() -> None:
    summary = {
        "uplift": 0.64,
        "uplift_low": 0.57,
        "uplift_high": 0.72,
        "uplift_interval_level": 0.98,
        "pair_ratios": AGAIN,
        "remeasured": True,
        "first_pass": FIRST,
        "disturbed": disturbance(FIRST, AGAIN),
    }
    result = SettingResult(Setting(3, 1, "low", "low", 1), summary)
    assert result.interval_text() == (
        "interval 0.57\N{EN DASH}0.72\N{MULTIPLICATION SIGN} while the machine was disturbed "
        "(not 95 %)"
    )
    verdict = verdict_sentence([result])
    assert "95 % interval" not in verdict.split("Measured again")[0]
    assert "Measured again, the machine was disturbed while measuring" in verdict
    assert result.row()["disturbed"] == summary["disturbed"]
