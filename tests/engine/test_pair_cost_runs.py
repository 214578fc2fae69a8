"""A pair that ran here is said with the c measured here: a Tune sweep and `draftdeck
bench` keep the c they measured, and the Pair page's verdict and `draftdeck check` say
it (measured on this computer) in place of the estimate from the weights' size."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from app.core.measure.pair_cost import BY_BENCH, BY_TUNE, read_cost, with_measured_cost
from app.core.measure.tune_plan import SweepPlan
from app.core.pack.compat import assess_paths
from app.core.pack.draft_cost import COST_CODES
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_runner import run_sweep
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]


def _expected_code(c: float) -> str:
    """The thresholds as the guide states them: about a target step's cost from 0.9 on,
    too close above 0.5, else only information."""
    return (
        "draft_not_smaller" if c >= 0.9 else "draft_too_close_in_size" if c > 0.5 else "draft_cost"
    )


def test_a_tune_sweep_keeps_the_c_it_measured(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = (
        bundle_copy("fast-target", desktop=True),
        bundle_copy("fast-draft", desktop=True),
    )
    plan = SweepPlan(
        draft_lengths=(2,),
        prompts=("Tell me about rivers.",),
        tokens=32,
        min_run_seconds=0.05,
        budget_seconds=1.0,
        max_repeats=2,
    )
    run = run_sweep(client, target, draft, plan, remeasure=False)
    (result,) = run.results
    kept = read_cost(target, draft)
    assert kept is not None and kept.by == BY_TUNE
    assert kept.ratio == result.summary["cost_ratio"]
    verdict = with_measured_cost(assess_paths(target, draft), target, draft)
    (found,) = [r for r in verdict.reasons if r.code in COST_CODES]
    assert found.code == _expected_code(kept.ratio)
    assert f"costs about {kept.ratio:.2f} " in found.message
    assert "(c, measured on this computer by a Tune sweep on " in found.message


def test_check_says_the_c_bench_measured(bundle_copy: Copy) -> None:
    target = bundle_copy("qwen3-target", desktop=True)
    draft = bundle_copy("qwen3-draft-identical", desktop=True)
    before = json.loads(run_cli("check", str(target), str(draft), "--json", check=True).stdout)
    (estimated,) = [r for r in before["reasons"] if r["code"] in COST_CODES]
    assert "estimated from the weights' size" in estimated["message"]
    bench = run_cli(
        *("bench", "--target", str(target), "--draft", str(draft), "--json"),
        *("--runs", "2", "--tokens", "24", "--min-run-seconds", "0.05"),
        check=True,
    )
    figures = json.loads(bench.stdout)
    c = figures["cost_ratio"]
    after = json.loads(run_cli("check", str(target), str(draft), "--json", check=True).stdout)
    (measured,) = [r for r in after["reasons"] if r["code"] in COST_CODES]
    assert measured["code"] == _expected_code(c)
    assert f"costs about {c:.2f} " in measured["message"]
    assert f"(c, measured on this computer by {BY_BENCH} on " in measured["message"]
    assert (measured["target"], measured["draft"]) == (
        round(figures["target_step_ms"], 2),
        round(figures["draft_step_ms"], 2),
    )
