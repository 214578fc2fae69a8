"""The rules for whether a pair may load, tested without MNN (the worker applies the
same plan_load as a guard)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.measure import ram_estimate
from app.core.measure.load_plan import LoadPlan, Refusal, plan_paths
from app.core.measure.words import FailureCode

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]


def _plan(result: LoadPlan | Refusal) -> LoadPlan:
    assert isinstance(result, LoadPlan), result
    return result


def test_a_compatible_pair_is_planned(fixture_bundle: Fixture) -> None:
    plan = _plan(plan_paths(fixture_bundle("fast-target"), fixture_bundle("fast-draft")))
    assert plan.verdict is not None and not plan.verdict.blocked
    assert (plan.draft_length, plan.verify_length) == (3, 4)  # MNN's default d, d + 1 rows
    assert plan.fit.level != ram_estimate.TOO_BIG
    assert plan.window.tokens == 2048 == plan.target_window.tokens


def test_the_target_alone_needs_no_verify(fixture_bundle: Fixture) -> None:
    plan = _plan(plan_paths(fixture_bundle("fast-target"), None))
    assert (plan.draft_length, plan.verify_length, plan.verdict) == (0, 0, None)


def test_a_blocked_pair_is_refused_with_its_reasons(fixture_bundle: Fixture) -> None:
    refusal = plan_paths(fixture_bundle("qwen3-target"), fixture_bundle("qwen35-draft"))
    assert isinstance(refusal, Refusal) and refusal.code == FailureCode.BLOCKED_PAIR
    assert refusal.message.startswith("This pair cannot work:")
    assert {r["code"] for r in refusal.reasons} >= {"vocab_mismatch", "attention_mismatch"}


def test_the_draft_length_comes_from_the_caller_else_the_recipe(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    target = bundle_copy("fast-target")
    config = json.loads((target / "config.json").read_text())
    config["draft_predict_length"] = 5
    (target / "config.json").write_text(json.dumps(config))
    draft = fixture_bundle("fast-draft")
    assert _plan(plan_paths(target, draft)).draft_length == 5
    assert _plan(plan_paths(target, draft, draft_length=2)).verify_length == 3
    for wrong in (0, 17):
        refusal = plan_paths(target, draft, draft_length=wrong)
        assert isinstance(refusal, Refusal) and refusal.code == FailureCode.BAD_REQUEST
        assert "out of range (1 to 16)" in refusal.message
    config["draft_predict_length"] = "three"
    (target / "config.json").write_text(json.dumps(config))
    refusal = plan_paths(target, draft)
    assert isinstance(refusal, Refusal) and "not a whole number" in refusal.message


def test_a_pair_that_cannot_fit_in_memory_is_refused(
    fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ram_estimate, "available_memory", lambda: 1_000_000)
    refusal = plan_paths(fixture_bundle("fast-target"), fixture_bundle("fast-draft"))
    assert isinstance(refusal, Refusal) and refusal.code == FailureCode.NOT_ENOUGH_MEMORY
    assert "Not enough memory" in refusal.message


def test_an_unreadable_pack_is_refused_naming_its_file(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    refusal = plan_paths(tmp_path / "missing", fixture_bundle("fast-draft"))
    assert isinstance(refusal, Refusal) and refusal.code == "not_a_bundle"
    assert str(tmp_path / "missing") in refusal.message


def test_the_pairs_window_is_the_smaller(fixture_bundle: Fixture) -> None:
    plan = _plan(
        plan_paths(
            fixture_bundle("fast-target"),
            fixture_bundle("fast-draft"),
            {"max_all_tokens": 300},
            {"max_all_tokens": 100},
        )
    )
    assert (plan.window.tokens, plan.target_window.tokens) == (100, 300)
