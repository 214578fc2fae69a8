"""Sweeps on the fixture pairs, and the statistics and verdicts on fixed figures.

Nothing here asserts a measured speed: a busy machine moves those. Sweeps are checked
for structure and for figures that derive from each other; the statistics, the best's
choice, the verdicts and Apply Best's refusals are checked on fixed, hand-computed
numbers.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import types
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.cli.tune import format_rows
from app.core.infra.typed_json import to_json
from app.core.measure import tune_run
from app.core.measure.bench import MIN_RUN_SECONDS, RunPair, combine_runs, summarize
from app.core.measure.intervals import coefficient_of_variation, median_interval, overlaps
from app.core.measure.metrics import DecodeStats, break_even_acceptance
from app.core.measure.pair_acceptance import read_tallies
from app.core.measure.tune_apply import apply_refusal, apply_setting, planned_changes, restore
from app.core.measure.tune_plan import (
    MIN_PAIRS,
    RUN_FIELDS,
    Setting,
    SweepPlan,
    plan_for,
    prompts_from_text,
    recipe_defaults,
)
from app.core.measure.tune_results import (
    SettingResult,
    best_result,
    equal_within_noise,
    leading,
    pays_off,
    pooled_baselines,
    rows,
    uplift_curves,
    verdict_sentence,
)
from app.core.measure.tune_run import TuneRun
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import StopReason, VerifyMethod
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.core.recipe.drafting_settings import FIXED_DRAFTING, write_drafting
from app.core.recipe.files import draft_run_recipe, target_run_recipe
from app.core.recipe.sampler_settings import sampler_settings
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_job import CANCELLED, DONE, MEASURING, QUEUED, TuneJob, tune_queue
from app.engine.client.tune_runner import run_sweep
from app.engine.protocol import (
    AgreementMeasured,
    Done,
    Generate,
    Load,
    MeasureAgreement,
    Request,
    ResetDone,
)
from tests.helpers.cli import run_cli
from tests.helpers.engine_events import ScriptedClient, loaded_event

Copy = Callable[..., Path]
# Short runs and budgets keep the sweeps quick; the figures are not asserted anyway.
QUICK = {
    "tokens": 48,
    "prompts": ("Tell me about rivers.", "def add(a, b):\n"),
    "min_run_seconds": 0.05,
    "budget_seconds": 2.0,
}


def _pair(bundle_copy: Copy, target: str, draft: str) -> tuple[Path, Path]:
    return bundle_copy(target, desktop=True), bundle_copy(draft, desktop=True)


def _quick(target: Path, draft: Path, **changes: object) -> SweepPlan:
    return replace(plan_for("quick", recipe_defaults(target, draft)), **{**QUICK, **changes})  # type: ignore[arg-type]


def _check_consistent(run: TuneRun) -> None:
    """What must hold of any measured run, however fast or busy the machine."""
    record = run.to_json()
    table = record["results"]
    for row, result in zip(table, run.results, strict=True):
        s = result.summary
        # The interval is the order-statistic interval of the pair ratios it reports.
        interval = median_interval(s["pair_ratios"])
        assert (row["uplift_low"], row["uplift"], row["uplift_high"]) == (
            interval.low,
            interval.median,
            interval.high,
        )
        assert row["uplift_low"] <= row["uplift"] <= row["uplift_high"]
        assert row["pairs"] == len(s["pair_ratios"]) == s["runs"]
        assert row["pairs"] >= MIN_PAIRS or row["interval_target_met"] is False
        assert row["repeats"] >= run.plan.min_rounds and row["seconds"] > 0
        assert isinstance(row["interval_target_met"], bool)
        if row["interval_target_met"]:
            assert interval.relative_half_width <= run.plan.target_half_width
        # Break-even is a fixed length's; adaptive rounds draft 0 up to the cap.
        assert row["break_even_acceptance"] == (
            None
            if row["adaptive"]
            else break_even_acceptance(row["draft_length"], row["cost_ratio"])
        )
        assert row["spec_tok_s"] == statistics.median(s["spec_runs_tok_s"])
        too_short = s["shortest_run_seconds"] < MIN_RUN_SECONDS
        assert any("too short" in w for w in s["warnings"]) == too_short
    # One baseline per target setting: the same figure for every row sharing it, the
    # median of all their plain runs.
    by_target: dict[int, list[dict[str, Any]]] = {}
    for row in table:
        by_target.setdefault(row["target_threads"], []).append(row)
    for threads, group in by_target.items():
        plain = [
            rate
            for r in run.results
            if r.setting.target_threads == threads
            for rate in r.summary["baseline_runs_tok_s"]
        ]
        assert {row["baseline_tok_s"] for row in group} == {statistics.median(plain)}
        assert {row["baseline_runs"] for row in group} == {len(plain)}
    best = best_result(run.results)
    assert best is not None and best in equal_within_noise(run.results)
    assert record["best"]["label"] == best.setting.label()
    assert record["pays_off"] == (best.interval.low > 1.0) == pays_off(run.results)
    assert ("pays off" in record["verdict"]) == record["pays_off"]
    assert (
        f"{best.interval.low:.2f}\N{EN DASH}{best.interval.high:.2f}\N{MULTIPLICATION SIGN}"
        in record["verdict"]
    )


def test_fast_pair_sweep_reports_consistent_figures(
    client: EngineClient, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    run = run_sweep(client, target, draft, _quick(target, draft))
    # The four lengths, then adaptive drafting up to the longest.
    assert [(r.setting.draft_length, r.setting.adaptive) for r in run.results] == [
        (1, False), (2, False), (3, False), (4, False), (4, True),
    ]  # fmt: skip
    assert not run.cancelled
    _check_consistent(run)
    record = run.to_json()
    # Every setting warmed up and ran long enough (or said it could not).
    for result in run.results:
        assert result.summary["generations_per_run"] >= 1
    # The leaders were measured afresh whenever more than one led.
    remeasured = [r for r in run.results if r.summary.get("remeasured")]
    assert len(remeasured) != 1
    for r in remeasured:
        assert set(r.summary["first_pass"]) >= {"uplift", "uplift_low", "uplift_high"}
    assert record["host"]["mnn"] == "3.6.1" and record["host"]["physical_cores"]


def test_independent_draft_is_rarely_accepted(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "qwen3-target", "qwen3-draft-independent")
    run = run_sweep(client, target, draft, _quick(target, draft, draft_lengths=(1, 3)))
    _check_consistent(run)
    # Acceptance is counted, not timed: greedy decoding makes it the same on any machine.
    # (Adaptive drafting may draft nothing at all: it steps aside while drafting loses.)
    assert all(
        r.summary["acceptance"] < 0.5
        for r in run.results
        if not (r.setting.adaptive and r.summary["acceptance"] is None)
    )


def test_identical_draft_accepts_all_and_the_verdict_follows_the_figures(
    client: EngineClient, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, "qwen3-target", "qwen3-draft-identical")
    run = run_sweep(client, target, draft, _quick(target, draft, draft_lengths=(2, 3)))
    # Every drafted token is accepted. Adaptive drafting may draft none: a draft as
    # costly as the target does not pay, and it steps aside while that is so.
    assert all(
        r.summary["acceptance"] == 1.0 or (r.setting.adaptive and r.summary["acceptance"] is None)
        for r in run.results
    )
    assert all(r.summary["lossless"] for r in run.results)
    # The desktop recipe (memory normal) verifies exactly, so nothing limits acceptance.
    assert all(r.row()["verify_agreement"] == 1.0 for r in run.results)
    assert not any(r.summary["acceptance_limited_by_verify"] for r in run.results)
    # Whether it gains is a measurement (a busy machine moves it); the verdict must
    # follow the measured figures either way.
    _check_consistent(run)


# -- statistics on fixed numbers -------------------------------------------------------


def test_median_interval_from_order_statistics() -> None:
    # n = 6: P(B <= 0) = 1/64 <= 0.025, P(B <= 1) = 7/64 is not: k = 1, the full range,
    # coverage 1 - 2/64.
    i = median_interval([6.0, 1.0, 5.0, 2.0, 4.0, 3.0])
    assert (i.median, i.low, i.high, i.level, i.n) == (3.5, 1.0, 6.0, 1 - 2 / 64, 6)
    assert i.met_level
    # n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024: k = 2, [x(2), x(9)].
    i = median_interval([float(x) for x in range(10, 0, -1)])
    assert (i.low, i.high, i.median) == (2.0, 9.0, 5.5)
    assert i.level == pytest.approx(1 - 22 / 1024)
    # n = 20: the textbook table's ranks 6 and 15, coverage 0.9586.
    i = median_interval([float(x) for x in range(1, 21)])
    assert (i.low, i.high) == (6.0, 15.0) and i.level == pytest.approx(0.9586, abs=1e-4)
    # Too few values for 95 %: the full range, and how much it holds.
    i = median_interval([1.1, 0.9, 1.3, 1.0, 1.2])
    assert (i.low, i.high, i.median) == (0.9, 1.3, 1.1)
    assert i.level == pytest.approx(1 - 2 / 32) and not i.met_level
    i = median_interval([2.0])
    assert (i.low, i.high, i.level) == (2.0, 2.0, 0.0)
    # Half-width relative to the median: (9 - 2) / 2 / 5.5.
    assert median_interval([float(x) for x in range(1, 11)]).relative_half_width == (
        pytest.approx(3.5 / 5.5)
    )
    with pytest.raises(ValueError):
        median_interval([])


def test_variation_and_overlap() -> None:
    # mean 2, sample standard deviation 1.
    assert coefficient_of_variation([1.0, 2.0, 3.0]) == pytest.approx(0.5)
    assert coefficient_of_variation([5.0]) is None
    a = median_interval([1.0] * 6)
    b = median_interval([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    c = median_interval([3.0] * 6)
    assert overlaps(a, b) and overlaps(b, a) and not overlaps(a, c)


def _stats(mode: str, tokens: int, seconds: float, d: int = 2) -> DecodeStats:
    stats = DecodeStats(mode, d, tokens=tokens + 1, first_tokens=1, decode_seconds=seconds)
    if mode == "speculative":
        stats.rounds, stats.drafted, stats.accepted = tokens // 2, tokens, tokens // 2
        stats.position_reached = [tokens // 2] * d
        stats.position_accepted = ([3, 1] + [0] * d)[:d]
    return stats


def test_runs_combine_and_summaries_carry_variation_and_warnings() -> None:
    one = _stats("speculative", 40, 0.2)
    both = combine_runs([one, _stats("speculative", 60, 0.3)])
    assert (both.tokens, both.decode_seconds, both.rounds) == (102, 0.5, 50)
    assert both.position_accepted == [6, 2] and both.tok_s == pytest.approx(200.0)
    # Plain 100 tokens each at 1.0, 0.5, 0.8 s; speculative at 0.5, 0.25, 0.5 s.
    pairs = [
        RunPair(_stats("plain", 100, b), _stats("speculative", 100, s), True)
        for b, s in ((1.0, 0.5), (0.5, 0.25), (0.8, 0.5))
    ]
    summary = to_json(summarize(pairs))  # as saved and printed
    assert summary["pair_ratios"] == [2.0, 2.0, 1.6]
    assert (summary["uplift"], summary["uplift_low"], summary["uplift_high"]) == (2.0, 1.6, 2.0)
    assert summary["uplift_interval_level"] == 0.75  # 3 pairs: 1 - 2/8
    assert summary["baseline_runs_tok_s"] == [100.0, 200.0, 125.0]
    assert summary["baseline_cv"] == pytest.approx(
        statistics.stdev([100.0, 200.0, 125.0]) / statistics.fmean([100.0, 200.0, 125.0])
    )
    assert summary["shortest_run_seconds"] == 0.25 < MIN_RUN_SECONDS
    assert any("too short to trust" in w for w in summary["warnings"])
    assert any("too few run pairs" in w for w in summary["warnings"])
    long_pairs = [
        RunPair(_stats("plain", 100, 1.0 + i / 10), _stats("speculative", 100, 0.6), True)
        for i in range(6)
    ]
    assert summarize(long_pairs).warnings == ()


def _result(
    draft_length: int,
    uplift: float,
    acceptance: float,
    c: float,
    low: float | None = None,
    high: float | None = None,
    target_threads: int = 1,
    draft_threads: int = 1,
    plain: list[float] | None = None,
) -> SettingResult:
    setting = Setting(draft_length, draft_threads, "low", "low", target_threads)
    low = uplift if low is None else low
    high = uplift if high is None else high
    return SettingResult(
        setting,
        {
            "uplift": uplift,
            "uplift_low": low,
            "uplift_high": high,
            "uplift_interval_level": 0.96875,
            "pair_ratios": [low, uplift, uplift, uplift, uplift, high],
            "acceptance": acceptance,
            "cost_ratio": c,
            "baseline_runs_tok_s": plain or [100.0],
            "baseline_tok_s": statistics.median(plain or [100.0]),
            "spec_tok_s": 150.0,
        },
    )


def test_verdicts_on_fixed_figures() -> None:
    costly = [_result(2, 0.97, 1.0, 1.0, 0.95, 0.99), _result(3, 0.93, 1.0, 1.0, 0.9, 0.94)]
    assert not pays_off(costly)
    assert verdict_sentence(costly) == (
        "Speculation does not pay for this pair: the draft costs about as much as the "
        "target (c = 1.00), so even perfect acceptance cannot win. Best: draft length 2, "
        "draft 1 thread, low precision, low memory; target 1 thread: "
        "0.97\N{MULTIPLICATION SIGN} plain decoding "
        "(95 % interval 0.95\N{EN DASH}0.99\N{MULTIPLICATION SIGN}, not above 1)."
    )
    # d=2, c=0.25: speedup (1 + a + a^2) / 1.5 > 1 from a = 0.366 (hand-solved).
    weak = [_result(2, 0.8, 0.2, 0.25, 0.7, 0.9)]
    assert verdict_sentence(weak).startswith(
        "Speculation does not pay for this pair: acceptance 0.20 is below the 0.37 "
        "needed to gain anything at c = 0.25. Best: draft length 2, draft 1 thread, low "
        "precision, low memory; target 1 thread: 0.80\N{MULTIPLICATION SIGN} plain decoding"
    )
    held = _result(2, 0.97, 0.85, 1.0)
    held.summary.update(acceptance_limited_by_verify=True, verify_note="Verify agreement 0.88.")
    assert verdict_sentence([held]).endswith("not above 1). Verify agreement 0.88.")
    good = [_result(1, 1.2, 0.9, 0.1, 1.1, 1.3), _result(3, 1.6, 0.9, 0.1, 1.5, 1.7)]
    assert pays_off(good)
    assert verdict_sentence(good).startswith(
        "Best: draft length 3, draft 1 thread, low precision, low memory; target 1 thread: "
        "1.60\N{MULTIPLICATION SIGN} plain decoding "
        "(95 % interval 1.50\N{EN DASH}1.70\N{MULTIPLICATION SIGN}, above 1: speculation "
        "pays off). "
        "Acceptance 0.90."
    )
    # Above 1 by the median, but the interval reaches below 1: does not pay.
    noisy = [_result(3, 1.08, 0.9, 0.1, 0.97, 1.2)]
    assert not pays_off(noisy)
    assert "beat plain decoding by more than the noise" in verdict_sentence(noisy)
    few = _result(3, 1.5, 0.9, 0.1, 1.2, 1.8)
    few.summary["uplift_interval_level"] = 0.75
    said = "(75 % interval 1.20\N{EN DASH}1.80\N{MULTIPLICATION SIGN}, above 1"
    assert said in verdict_sentence([few])


def test_equal_within_noise_names_the_cheaper() -> None:
    d2 = _result(2, 1.50, 0.9, 0.1, 1.40, 1.60)
    d3 = _result(3, 1.55, 0.9, 0.1, 1.45, 1.65)  # the top, but overlaps d=2
    d4 = _result(4, 1.30, 0.9, 0.1, 1.25, 1.35)  # clearly below
    d1_two = _result(2, 1.52, 0.9, 0.1, 1.42, 1.62, draft_threads=2)
    results = [d2, d3, d4, d1_two]
    assert leading(results) == [d2, d3, d1_two]
    assert equal_within_noise(results) == [d2, d1_two, d3]
    assert best_result(results) is d2
    assert (
        "Equal to it within noise: draft length 2, draft 2 threads, low precision, low "
        "memory; target 1 thread; draft length 3, draft 1 thread, low precision, low memory; "
        "target 1 thread; the cheapest (shorter draft, fewer threads) is named."
    ) in verdict_sentence(results)
    # Overlapping, but one pays off and the other does not: not a tie.
    top = _result(3, 1.03, 0.9, 0.1, 1.01, 1.2)
    below = _result(1, 1.02, 0.9, 0.1, 0.95, 1.05)
    assert best_result([top, below]) is top
    # Overlapping intervals, medians outside each other's: re-measured, but not a tie.
    high = _result(3, 2.02, 0.9, 0.1, 1.71, 2.25)
    low = _result(2, 1.57, 0.9, 0.1, 1.26, 1.77)
    assert leading([low, high]) == [low, high]
    assert equal_within_noise([low, high]) == [high]
    # A higher median whose interval reaches below 1 does not outrank a sure gain.
    wide = _result(2, 1.35, 0.9, 0.1, 0.98, 1.47)
    sure = _result(3, 1.20, 0.9, 0.1, 1.13, 1.34)
    assert best_result([wide, sure]) is sure and pays_off([wide, sure])


def test_one_baseline_per_target_setting() -> None:
    a = _result(1, 1.2, 0.9, 0.1, plain=[100.0, 110.0])
    b = _result(2, 1.3, 0.9, 0.1, plain=[90.0, 300.0, 120.0])
    c = _result(1, 1.1, 0.9, 0.1, target_threads=2, plain=[200.0])
    assert pooled_baselines([a, b, c]) == {(1,): (110.0, 5), (2,): (200.0, 1)}
    table = rows([a, b, c])
    assert [r["baseline_tok_s"] for r in table] == [110.0, 110.0, 200.0]
    assert [r["baseline_runs"] for r in table] == [5, 5, 1]
    # The draft's settings do not split the baseline.
    assert (
        Setting(1, 1, "low", "low", 1).target_key()
        == Setting(4, 2, "high", "normal", 1).target_key()
    )
    run = TuneRun("t", "d", SweepPlan(), results=[a, b, c])
    assert [r["baseline_tok_s"] for r in run.to_json()["results"]] == [110.0, 110.0, 200.0]


def test_uplift_curves_keep_the_best_per_draft_length() -> None:
    one_a = _result(1, 1.2, 0.9, 0.1)
    one_b = _result(1, 1.4, 0.9, 0.1, target_threads=2)  # another target: its own line
    one_c = _result(1, 1.5, 0.9, 0.1)  # the same line and length, higher: drawn instead
    one_c.setting = replace(one_c.setting, draft_precision="high")
    three = _result(3, 1.1, 0.9, 0.1)
    two_threads = _result(2, 1.3, 0.9, 0.1, draft_threads=2)
    curves = uplift_curves([three, one_a, two_threads, one_b, one_c])
    assert [(c.draft_threads, c.target_threads, c.points) for c in curves] == [
        (1, 1, (one_c, three)),
        (1, 2, (one_b,)),
        (2, 1, (two_threads,)),
    ]
    assert uplift_curves([]) == []


def test_prompts_come_from_text_split_by_empty_lines() -> None:
    assert prompts_from_text("a\nb\n\n  c \n\n\n") == ("a\nb", "c")
    assert prompts_from_text(" \n\n ") == plan_for("quick", _DEFAULTS).prompts


_DEFAULTS = {
    "draft_length": 3,
    "draft_threads": 1,
    "draft_precision": "low",
    "draft_memory": "low",
    "target_threads": 1,
}


def test_cli_rows_show_the_interval_and_the_pooled_baseline() -> None:
    line = format_rows(rows([_result(3, 1.6, 0.9, 0.1, 1.5, 1.7)]))[0]
    assert line == (
        "draft length 3, draft 1 thread, low precision, low memory; target 1 thread: "
        "uplift (median of pairs) 1.600x "
        "[95 % interval 1.500-1.700], acceptance 0.90, c 0.100, spec 150.0 vs plain "
        "100.0 tok/s in its pairs (plain pooled 100.0), 6 pairs (interval target not met)"
    )


# -- Apply Best --------------------------------------------------------------------------


def test_quick_sweep_applies_only_the_draft_length(bundle_copy: Copy) -> None:
    # The fixture recipes ask for 4 target threads; a 2-core machine caps what is
    # measured, and the Quick sweep must still leave thread_num alone.
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    write_drafting(draft, FIXED_DRAFTING)  # as the fixed setting applied drafts
    defaults = recipe_defaults(target, draft, cores=2)
    plan = plan_for("quick", defaults, cores=2)
    # Adaptive drafting is measured too; this fixed setting leaves the pack's as it is.
    assert plan.swept_fields() == ("draft_length", "adaptive")
    setting = replace(plan.settings()[2], target_threads=2, draft_threads=1)
    setting = replace(setting, draft_length=4)
    changes = planned_changes(setting, target, draft, plan.swept_fields())
    assert [(c.where, c.recipe, c.key, c.new) for c in changes] == [
        ("computer", "config.json", "draft_predict_length", 4)
    ]
    assert changes[0].text() == (
        "On this computer: fast-target/config.json draft_predict_length 3 → 4 (measured here)"
    )
    before = (target / "config.json").read_bytes()
    snapshot = apply_setting(setting, target, draft, plan.swept_fields())
    assert (target / "config.json").read_bytes() == before  # the phone's recipe
    assert read_desktop(target).of("config.json") == {"draft_predict_length": 4}
    assert target_run_recipe(target)["thread_num"] == 4  # thread_num left as it is
    restore(snapshot)
    assert not (target / THIS_COMPUTER_FILE).exists()
    thorough = plan_for("thorough", defaults, cores=2)
    assert set(thorough.swept_fields()) == set(RUN_FIELDS)


def test_apply_is_refused_unless_better_beyond_noise() -> None:
    current = {
        "draft_length": 1,
        "draft_threads": 1,
        "draft_precision": "low",
        "draft_memory": "low",
        "target_threads": 1,
        "adaptive": False,
    }
    plan = SweepPlan(draft_lengths=(1, 2, 3))

    def run(*results: SettingResult) -> TuneRun:
        return TuneRun("t", "d", plan, results=list(results))

    # Best pays off and beats the current recipe (d=1, 1.2x) beyond noise.
    ok = run(_result(1, 1.2, 0.9, 0.1, 1.1, 1.3), _result(3, 1.6, 0.9, 0.1, 1.5, 1.7))
    assert apply_refusal(ok, current) is None
    # Not above 1 beyond noise.
    flat = run(_result(1, 0.9, 0.9, 0.1, 0.8, 0.95), _result(3, 1.05, 0.9, 0.1, 0.98, 1.1))
    assert "not faster than plain decoding beyond noise" in str(apply_refusal(flat, current))
    # The current recipe (d=3) measured 1.45x; d=2 ties with it and, cheaper, is named
    # best, but its interval starts at 1.35: not better than the current beyond noise.
    close = run(_result(2, 1.4, 0.9, 0.1, 1.35, 1.45), _result(3, 1.45, 0.9, 0.1, 1.3, 1.6))
    assert "not better than the current recipe beyond noise" in str(
        apply_refusal(close, {**current, "draft_length": 3})
    )
    # Better, but the best's interval starts at 1.4, under the current recipe's 1.45x
    # (their medians are not inside each other's intervals: not a tie).
    near = run(_result(1, 1.45, 0.9, 0.1, 1.42, 1.47), _result(3, 1.6, 0.9, 0.1, 1.4, 1.8))
    assert best_result(near.results) is near.results[1]
    assert "not better than the current recipe beyond noise" in str(apply_refusal(near, current))
    # Equal within noise to a costlier one: the cheaper current recipe stays.
    same = run(_result(1, 1.55, 0.9, 0.1, 1.42, 1.65), _result(3, 1.6, 0.9, 0.1, 1.5, 1.8))
    assert "is the current recipe already" in str(apply_refusal(same, current))
    cannot = run(_result(3, 1.6, 0.9, 0.1, 1.5, 1.7))
    cannot.cannot_pay = "linear attention"
    assert apply_refusal(cannot, current) == "linear attention"
    assert apply_refusal(run(), current) == "nothing was measured"


def test_cancel_keeps_what_was_measured(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    seen: list[object] = []
    run = run_sweep(
        client,
        target,
        draft,
        _quick(target, draft),
        cancelled=lambda: len(seen) >= 2,
        on_result=seen.append,
    )
    assert run.cancelled
    assert len(run.results) == 2 and run.results == seen


def test_tune_job_status_moves_through_its_states(bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    job = TuneJob(target, draft, _quick(target, draft, draft_lengths=(1, 2)))
    first = job.status()
    # Draft lengths 1 and 2, and adaptive drafting up to 2.
    assert (first.state, first.settings_total, first.pairs_done) == (QUEUED, 3, 0)
    assert first.pairs_total == 3 * job.plan.pairs_per_setting and first.eta_seconds is None
    queue = tune_queue()
    seen: list[tuple[str, int, int]] = []

    def record() -> None:
        s = job.status()
        seen.append((s.state, s.settings_done, s.pairs_done))

    queue.subscribe(record)
    try:
        queue.submit(job)
        end = queue.wait(job, timeout=300)
    finally:
        queue.shutdown()
    assert end is job.status() and end.state == DONE and job.is_finished()
    states = [state for state, _, _ in seen]
    # (The queue's own report of the submit may come just after the first from the job.)
    assert set(states) <= {QUEUED, MEASURING, DONE} and MEASURING in states
    assert states.index(DONE) == len(states) - 1  # told once, at the end
    # Settings and pairs only ever grow while it measures.
    measuring = [(s, p) for state, s, p in seen if state == MEASURING]
    assert measuring == sorted(measuring) and measuring[-1][1] == end.pairs_done
    assert end.settings_done == end.settings_total == 3
    assert end.pairs_done == end.pairs_total and end.fraction == 1.0 and end.eta_seconds == 0
    run = end.run
    assert run is not None and not run.cancelled and end.error == ""
    assert list(end.results) == run.results and end.message == run.verdict()
    assert end.elapsed > 0
    _check_consistent(run)


def test_cancelling_the_tune_job_ends_it_cancelled(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    job = TuneJob(target, draft, _quick(target, draft), engine=lambda: nullcontext(client))
    queue = tune_queue()

    def cancel_after_the_first_setting() -> None:
        if job.status().results:
            job.cancel()

    queue.subscribe(cancel_after_the_first_setting)
    try:
        queue.submit(job)
        end = queue.wait(job, timeout=300)
    finally:
        queue.shutdown()
    assert end is job.status() and end.state == CANCELLED and job.is_finished()
    assert end.run is not None and end.run.cancelled
    assert len(end.results) == 1 < end.settings_total == 5
    assert end.run.results == list(end.results)


def test_apply_best_changes_exactly_the_swept_keys(bundle_copy: Copy, tmp_path: Path) -> None:
    """Into this computer's settings (no phone chosen), over the file each key is in;
    the phone's recipes stay byte for byte."""
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    recipes = (target / "config.json").read_bytes(), (draft / "config_cpu.json").read_bytes()
    plan = _quick(target, draft)
    setting = replace(plan.settings()[1], draft_threads=2)  # draft length 2
    before_target, before_draft = target_run_recipe(target), draft_run_recipe(draft)
    snapshot = apply_setting(setting, target, draft)
    after_target, after_draft = target_run_recipe(target), draft_run_recipe(draft)
    assert {k for k in after_target if after_target[k] != before_target.get(k)} == {
        "draft_predict_length"
    }
    assert after_target["draft_predict_length"] == 2
    assert {k for k in after_draft if after_draft[k] != before_draft.get(k)} == {"thread_num"}
    assert read_desktop(target).of("config.json") == {"draft_predict_length": 2}
    assert read_desktop(draft).of("config_cpu.json") == {"thread_num": 2}
    assert ((target / "config.json").read_bytes(), (draft / "config_cpu.json").read_bytes()) == (
        recipes
    )
    restore(snapshot)
    assert target_run_recipe(target) == before_target
    assert draft_run_recipe(draft) == before_draft
    assert not (target / THIS_COMPUTER_FILE).exists()
    assert not (draft / THIS_COMPUTER_FILE).exists()


def test_saved_results_reload(client: EngineClient, bundle_copy: Copy, tmp_path: Path) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    plan = _quick(target, draft, draft_lengths=(2,), adaptive=False)
    assert read_tallies(target, draft) is None
    run = run_sweep(client, target, draft, plan)
    # Its greedy acceptance by position is kept for the phone forecast (exact: the
    # fixture recipes verify at memory normal).
    tallies = read_tallies(target, draft)
    assert tallies is not None and tallies.exact and tallies.reached[0] > 0
    run.save(tmp_path / "run.json")
    again = TuneRun.load(tmp_path / "run.json")
    assert again.to_json() == run.to_json()
    csv_text = (tmp_path / "run.csv").read_text()
    assert csv_text.startswith("draft_length,") and len(csv_text.splitlines()) == 2
    assert "uplift_low,uplift_high" in csv_text.splitlines()[0]


def test_cli_tune_json_and_apply(bundle_copy: Copy, draftdeck_home: Path) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    before = (target / "config.json").read_text(), (draft / "config_cpu.json").read_text()
    current = recipe_defaults(target, draft)  # before --apply may change it
    proc = run_cli(
        "tune",
        "--target",
        str(target),
        "--draft",
        str(draft),
        "--quick",
        "--tokens",
        "48",
        "--budget",
        "2",
        "--min-run-seconds",
        "0.05",
        "--json",
        "--apply",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert {"results", "best", "pays_off", "equal_within_noise"} <= set(out)
    run = TuneRun.load(Path(out["saved"]))
    _check_consistent(run)
    # Applied exactly when the refusal rules allow it, whatever the machine measured.
    refusal = apply_refusal(run, current)
    if refusal is None:
        # Apply writes only what the sweep measured differently: a quick tune sweeps the
        # draft length and adaptive drafting, so that is all "applied" names (the best's
        # label names all), and the drafting file changes only when the best drafts
        # otherwise than the pack did.
        best = best_result(run.results)
        assert best is not None and best.setting.label() == out["best"]["label"]
        d = out["best"]["draft_length"]
        words = "adaptive drafting up to" if best.setting.adaptive else "draft length"
        assert out["applied"] == f"{words} {d}"
        assert out["applied"] == best.setting.label(run.applied_fields())
        drafting = [("adaptive", best.setting.adaptive)]
        length = [("draft_predict_length", d)] if d != current["draft_length"] else []
        assert [(c["key"], c["new"]) for c in out["changes"]] == [
            *length,
            *(drafting if best.setting.adaptive != current["adaptive"] else []),
        ]
        # No phone chosen: everything measured here is this computer's; the phone's
        # recipes are as they were, and what runs here is the best.
        assert {c["where"] for c in out["changes"]} <= {"computer"}
        assert (
            (target / "config.json").read_text(),
            (draft / "config_cpu.json").read_text(),
        ) == before
        assert recipe_defaults(target, draft)["draft_length"] == d
    else:
        assert "applied" not in out and out["not_applied"] == refusal
        assert (
            (target / "config.json").read_text(),
            (draft / "config_cpu.json").read_text(),
        ) == before
    assert Path(out["saved"]).is_file() and Path(out["saved"]).with_suffix(".csv").is_file()


def test_cpu_name_on_macos_comes_from_sysctl(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []

    def sysctl(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        asked.append(command)
        return subprocess.CompletedProcess(command, 0, "Apple M2 Pro\n", "")

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(subprocess, "run", sysctl)
    assert tune_run._cpu_model() == "Apple M2 Pro"
    assert asked[0][-2:] == ["-n", "machdep.cpu.brand_string"]


def test_cpu_name_on_windows_comes_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    class Key:
        def __enter__(self) -> Key:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    def open_key(root: object, path: str) -> Key:
        opened.append(path)
        return Key()

    winreg = types.SimpleNamespace(
        HKEY_LOCAL_MACHINE=object(),
        OpenKey=open_key,
        QueryValueEx=lambda key, name: ("Intel(R) Core(TM) i7-1185G7 @ 3.00GHz  ", 1),
    )
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "winreg", winreg)
    assert tune_run._cpu_model() == "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz"
    assert opened == [r"HARDWARE\DESCRIPTION\System\CentralProcessor\0"]


def test_cpu_name_falls_back_to_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sysctl(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(command[0])

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(subprocess, "run", no_sysctl)
    monkeypatch.setattr(platform, "processor", lambda: "arm")
    assert tune_run._cpu_model() == "arm"


class _ScriptedEngine(ScriptedClient):
    """Stands in for the engine worker: decode times from a script, no clock involved.
    Plain decoding: 100 tokens in 1 s. Speculative: 100 tokens in 1 / speed[d] s,
    times (1 + wobble[d]) on every other call of that mode."""

    def __init__(self, speed: dict[int, float], wobble: dict[int, float] | None = None) -> None:
        self.speed, self.wobble = speed, wobble or {}
        self.d = 1
        self.loads: list[int] = []
        self.calls = 0

    def run(self, request: Request[Any], *_: Any, **__: Any) -> object:
        if isinstance(request, Load):
            self.d = request.draft_length or 1
            self.loads.append(self.d)
            return loaded_event(draft_length=self.d)
        if isinstance(request, MeasureAgreement):
            return AgreementMeasured(VerifyAgreement(1.0, 4, 4, self.d, VerifyMethod.BATCHED))
        if isinstance(request, Generate):
            self.calls += 1
            seconds = 1.0
            if request.mode == "speculative":
                seconds = 1.0 / self.speed[self.d]
                if self.calls % 4 < 2:
                    seconds *= 1 + self.wobble.get(self.d, 0.0)
            stats = _stats(request.mode or "speculative", 100, seconds, self.d)
            return Done(tokens=(1,) * 101, text="", stopped_by=StopReason.MAX_TOKENS, stats=stats)
        return ResetDone()


def test_rounds_continue_until_the_interval_is_narrow_or_the_limit(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    plan = SweepPlan(
        draft_lengths=(1, 2),
        prompts=("a", "b", "c"),
        max_repeats=5,
        min_run_seconds=0.5,
        budget_seconds=600.0,
    )
    # d=1 steady: two rounds give 6 identical ratios, a zero-width 95 % interval.
    # d=2 wobbles by 30 %: its interval never narrows to +-5 %, so it runs 5 rounds.
    engine = _ScriptedEngine({1: 1.2, 2: 1.5}, {2: 0.3})
    run = run_sweep(engine, target, draft, plan, remeasure=False)  # type: ignore[arg-type]
    steady, wobbly = run.results
    assert (steady.summary["repeats"], steady.summary["interval_target_met"]) == (2, True)
    assert steady.row()["pairs"] == 6 and steady.uplift == pytest.approx(1.2)
    assert (wobbly.summary["repeats"], wobbly.summary["interval_target_met"]) == (5, False)
    assert wobbly.row()["pairs"] == 15
    # Runs of 1 s already exceed the 0.5 s floor: one generation a run, no warning.
    assert steady.summary["generations_per_run"] == 1
    assert not any("too short" in w for w in steady.summary["warnings"])


def test_leaders_are_measured_afresh_and_the_cheaper_tie_is_named(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    plan = SweepPlan(draft_lengths=(1, 2, 3), prompts=("a", "b", "c"), max_repeats=2)
    # d=2 and d=3 run equally fast; d=1 is clearly slower.
    engine = _ScriptedEngine({1: 1.1, 2: 1.5, 3: 1.5})
    run = run_sweep(engine, target, draft, plan)  # type: ignore[arg-type]
    assert engine.loads == [1, 2, 3, 2, 3]  # the two leaders loaded again
    assert [bool(r.summary.get("remeasured")) for r in run.results] == [False, True, True]
    best = best_result(run.results)
    assert best is not None and best.setting.draft_length == 2
    record = run.to_json()
    assert record["equal_within_noise"] == [r.setting.label() for r in run.results[1:]]
    assert (
        "Equal to it within noise: draft length 3, draft 1 thread, low precision, low "
        "memory; target 1 thread; the cheapest"
    ) in record["verdict"]
    assert (
        record["pays_off"] is True
        and "95 % interval 1.50\N{EN DASH}1.50\N{MULTIPLICATION SIGN}" in record["verdict"]
    )


def test_short_runs_are_repeated_to_last_long_enough(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    # Speculative decoding at 10x: runs of 0.1 s, so 5 generations make 0.5 s.
    engine = _ScriptedEngine({1: 10.0})
    plan = SweepPlan(draft_lengths=(1,), prompts=("a", "b", "c"), max_repeats=2)
    run = run_sweep(engine, target, draft, plan)  # type: ignore[arg-type]
    summary = run.results[0].summary
    assert summary["generations_per_run"] == 5
    assert summary["shortest_run_seconds"] == pytest.approx(0.5)
    assert summary["tokens"] == 5 * 101 and summary["uplift"] == pytest.approx(10.0)


# -- sampling: expected acceptance over runs, temperature rows ---------------------------


def test_summaries_under_sampling_pool_expected_acceptance_over_every_run() -> None:
    def sampled(tokens: int, expected: list[float]) -> DecodeStats:
        stats = _stats("speculative", tokens, 0.5)
        stats.sampler, stats.position_expected = "temperature 0.7", expected
        return stats

    # Positions reached 20, 20 then 30, 30 times; sum min(p, q) adds up like the counts.
    pairs = [
        RunPair(_stats("plain", 40, 1.0), sampled(40, [18.0, 10.0]), False),
        RunPair(_stats("plain", 60, 1.0), sampled(60, [27.0, 15.0]), True),
    ]
    summary = to_json(summarize(pairs))
    assert summary["sampler"] == "temperature 0.7"
    assert summary["expected_by_position"] == [45 / 50, 25 / 50]
    assert summary["expected_acceptance"] == pytest.approx(70 / 100)
    assert summary["lossless"] is None  # sampling: not a token-for-token comparison
    greedy = to_json(
        summarize([RunPair(_stats("plain", 40, 1.0), _stats("speculative", 40, 0.5), True)])
    )
    assert (greedy["sampler"], greedy["lossless"]) == ("greedy", True)
    assert (greedy["expected_acceptance"], greedy["expected_by_position"]) == (None, [])


def test_temperature_rows_are_measured_but_never_best_nor_applied(tmp_path: Path) -> None:
    plan = SweepPlan(draft_lengths=(2, 3), sample=True, temperatures=(0.6, 1.2))
    assert [(s.draft_length, s.temperature) for s in plan.settings()] == [
        (2, None), (2, 0.6), (2, 1.2), (3, None), (3, 0.6), (3, 1.2),
    ]  # fmt: skip
    assert plan.swept_fields() == ("draft_length",)  # the temperature is no recipe key
    assert SweepPlan(temperatures=(0.6,)).settings()[0].temperature is None  # greedy plan
    recipe = sampler_settings({"temperature": 0.8, "top_k": 20})
    assert Setting(2, 1, "low", "low", 1).sampler(recipe) is recipe
    assert Setting(2, 1, "low", "low", 1, 1.2).sampler(recipe) == replace(recipe, temperature=1.2)
    assert Setting(2, 1, "low", "low", 1, 1.2).sampler(None) is None
    assert Setting(2, 1, "low", "low", 1, 0.6).label() == (
        "draft length 2, draft 1 thread, low precision, low memory; target 1 thread at "
        "temperature 0.6"
    )
    own = _result(2, 1.3, 0.9, 0.1, 1.2, 1.4)
    hot = _result(3, 2.5, 0.9, 0.1, 2.4, 2.6)
    hot.setting = replace(hot.setting, temperature=1.2)
    results = [own, hot]
    assert best_result(results) is own and leading(results) == [own]
    assert equal_within_noise(results) == [own]
    assert [c.points for c in uplift_curves(results)] == [(own,)]
    assert verdict_sentence(results).endswith(
        "Temperature 1.2 was measured, not applied: a temperature changes the output, not "
        "only the speed, so only the recipe's own sampler competes for best."
    )
    # The current recipe is never a temperature row, even when the swept keys match.
    run = TuneRun("t", "d", SweepPlan(draft_lengths=(2, 3)), results=[hot, own])
    assert apply_refusal(run, {"draft_length": 3}) is None
    assert apply_refusal(run, {"draft_length": 2}) == (
        "the best (draft length 2) is the current recipe already"  # what Apply would write
    )
    # A run saved before temperatures reloads (its rows at the recipe's sampler).
    run.save(tmp_path / "run.json")
    data = json.loads((tmp_path / "run.json").read_text())
    for row in data["results"]:
        del row["temperature"]
    old = TuneRun.from_json(data)
    assert [r.setting.temperature for r in old.results] == [None, None]
