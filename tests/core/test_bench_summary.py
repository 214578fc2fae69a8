"""The bench summary is built once and written by one to_json, with the keys in the order
`draftdeck bench --json` and saved tune runs always had them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.measure.bench import RunPair, summarize
from app.core.measure.bench_summary import BenchFacts, BenchSummary, PairFigures, SweepFacts
from app.core.measure.metrics import DecodeStats
from app.core.measure.tune_plan import Setting, SweepPlan
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import Mode, VerifyMethod

FIGURE_KEYS = [
    "schema", "runs", "tokens", "draft_length", "baseline_tok_s", "spec_tok_s", "uplift",
    "acceptance", "mean_accepted_length", "per_position_acceptance", "cost_ratio",
    "target_step_ms", "draft_step_ms", "verify_ms", "predicted_speedup", "prediction_ratio",
    "iid_speedup", "sampler", "checked_acceptance", "expected_acceptance",
    "expected_by_position", "lossless", "uplift_spread", "uplift_low", "uplift_high",
    "uplift_interval_level", "pair_ratios", "baseline_runs_tok_s", "spec_runs_tok_s",
    "baseline_cv", "spec_cv", "shortest_run_seconds", "min_run_seconds", "warnings",
    # Added with adaptive drafting, after every key a reader already knew.
    "drafting", "aside_rounds", "asides", "aside_note",
]  # fmt: skip
AGREEMENT_KEYS = ["verify_agreement", "acceptance_limited_by_verify", "verify_note"]
AGREEMENT = VerifyAgreement(0.75, 48, 64, 2, VerifyMethod.BATCHED)


def _stats(mode: Mode, tokens: int, seconds: float) -> DecodeStats:
    stats = DecodeStats(mode, 2, tokens=tokens, first_tokens=1, decode_seconds=seconds)
    if mode == Mode.SPECULATIVE:
        stats.rounds, stats.drafted, stats.accepted = tokens // 2, tokens, tokens // 2
        stats.position_reached, stats.position_accepted = [tokens // 2] * 2, [3, 1]
    return stats


def _figures() -> PairFigures:
    return summarize(
        [
            RunPair(_stats(Mode.PLAIN, 100, b), _stats(Mode.SPECULATIVE, 100, s), True)
            for b, s in ((1.0, 0.5), (0.8, 0.5), (0.9, 0.6))
        ]
    )


def _sweep(first_pass: dict[str, object] | None = None) -> BenchSummary:
    facts = SweepFacts(None, 2, True, 0.05, 12.5, 60.0, 1, first_pass)
    return BenchSummary(_figures(), AGREEMENT, facts)


def test_bench_json_keeps_its_key_order() -> None:
    facts = BenchFacts(None, None, True, False, "t", "d", 7)
    out = BenchSummary(_figures(), AGREEMENT, facts).to_json()
    assert list(out) == [
        *FIGURE_KEYS,
        "cannot_pay",
        "linear_rollback",
        *AGREEMENT_KEYS,
        *["lossless_expected", "linear_attention", "target", "draft", "seed"],
    ]
    assert out["pair_ratios"] == [2.0, 1.6, 1.5] and out["uplift_spread"] == [1.5, 2.0]
    assert out["verify_agreement"] == AGREEMENT.to_json() and out["seed"] == 7
    assert out["verify_note"] == AGREEMENT.sentence(out["acceptance"])
    # Every value is plain JSON: printed, it reads back the same.
    assert json.loads(json.dumps(out)) == out


def test_tune_summary_keeps_its_key_order_and_marks_a_remeasure() -> None:
    sweep = [
        "cannot_pay", "repeats", "interval_target_met", "target_half_width", "seconds",
        "budget_seconds", "generations_per_run",
    ]  # fmt: skip
    assert list(_sweep().to_json()) == [*FIGURE_KEYS, *AGREEMENT_KEYS, *sweep]
    again = _sweep({"uplift": 1.4, "runs": 3}).to_json()
    assert list(again)[-2:] == ["remeasured", "first_pass"]
    assert again["remeasured"] is True and again["first_pass"] == {"uplift": 1.4, "runs": 3}


def test_a_saved_run_reads_back_its_summaries(tmp_path: Path) -> None:
    run = TuneRun("t", "d", SweepPlan(draft_lengths=(2,)))
    run.results.append(SettingResult(Setting(2, 4, "low", "low", 4), _sweep().to_json()))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run.to_json()), encoding="utf-8")
    back = TuneRun.from_json(json.loads(path.read_text(encoding="utf-8")))
    assert back.results[0].summary == _sweep().to_json()
    assert back.results[0].uplift == pytest.approx(_figures().uplift or 0.0)
