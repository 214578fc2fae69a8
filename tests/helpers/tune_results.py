"""A sweep's result for one draft length, with made-up figures, to feed the Tune page's
table and chart without running a sweep (and a pack's measurement against a fast-target
beside it, for writing a pack's files); and the smallest real plan, for one that runs."""

from __future__ import annotations

import statistics
from pathlib import Path

from app.core.measure.tune_plan import Setting, SweepPlan
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun
from app.core.packmaking.measured import BENCH, TargetMeasurement
from app.ui.tune.tune_plan_form import PlanForm


def setting_result(
    d: int, uplift: float, low: float, high: float, **figures: object
) -> SettingResult:
    """Draft length `d` at `uplift` (95 % interval `low`-`high`) over six pairs; other
    figures plausible unless given."""
    return SettingResult(
        Setting(d, 1, "low", "normal", 1),
        {
            "uplift": uplift,
            "uplift_low": low,
            "uplift_high": high,
            "uplift_interval_level": 0.96875,
            "pair_ratios": [low, uplift, uplift, uplift, uplift, high],
            "repeats": 3,
            "interval_target_met": True,
            "baseline_runs_tok_s": [150.1],
            "baseline_tok_s": 150.1,
            "spec_tok_s": 313.6,
            "acceptance": 0.96,
            "cost_ratio": 0.1,
            **figures,
        },
    )


def paired_result(d: int, spec_runs: list[float], plain_runs: list[float]) -> SettingResult:
    """Draft length `d` from made-up pairs (speculative, plain tok/s side by side), its
    figures summarised as bench does: medians taken per side, the uplift the median of
    the pairs' ratios, the interval their range."""
    ratios = [s / p for s, p in zip(spec_runs, plain_runs, strict=True)]
    uplift = statistics.median(ratios)
    return setting_result(
        d,
        uplift,
        min(ratios),
        max(ratios),
        pair_ratios=ratios,
        spec_runs_tok_s=spec_runs,
        baseline_runs_tok_s=plain_runs,
        spec_tok_s=statistics.median(spec_runs),
        baseline_tok_s=statistics.median(plain_runs),
    )


def done_run(library: Path) -> TuneRun:
    """A Quick sweep's four draft lengths (fast-target and fast-draft in `library`),
    as a reviewer's screenshot had them."""
    root = library
    results = [
        setting_result(1, 1.37, 1.0, 1.77, interval_target_met=False),
        setting_result(2, 1.65, 1.47, 2.04),
        setting_result(3, 2.22, 1.02, 3.62, remeasured=True),
        setting_result(4, 2.0, 1.5, 2.5, remeasured=True),
    ]
    plan = SweepPlan(draft_lengths=(1, 2, 3, 4))
    return TuneRun(str(root / "fast-target"), str(root / "fast-draft"), plan, results=results)


def tiny_plan(form: PlanForm) -> None:
    """One draft length drafted fixed, few tokens, short runs: the fewest pairs a
    setting takes."""
    form.d_min.setValue(2)
    form.d_max.setValue(2)
    form.adaptive.setChecked(False)
    form.tokens.setValue(16)
    form.min_run.setValue(0.0)
    form.budget.setValue(1)
    form.prompts.setPlainText("Tell me about rivers.")


def fast_target_measurement(draft: Path) -> TargetMeasurement:
    """A bench of `draft` against the fast-target beside it: d=3 at 1.5x (1.2-1.8)."""
    return TargetMeasurement(
        "fast_target",
        "fast-target",
        str(draft.parent / "fast-target"),
        BENCH,
        results=[setting_result(3, 1.5, 1.2, 1.8)],
        draft_recipe={"backend_type": "cpu"},
    )
