"""Every load asks the load plan before the engine (EngineClient.load): a pair or a
sweep's setting the engine would refuse is refused in its words, and no worker is
started for it; measuring a pack records such a target as refused (#28)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import pytest

from app.core.infra.errors import EngineError
from app.core.measure import ram_estimate
from app.core.measure.tune_plan import plan_for, recipe_defaults
from app.engine.client.engine_client import EngineClient
from app.engine.client.pack_measure import MeasureOptions, measure_target
from app.engine.client.tune_job import FAILED, TuneJob
from app.engine.client.tune_runner import run_sweep
from app.engine.protocol import Load

Fixture = Callable[[str], Path]


def test_a_load_the_plan_refuses_never_reaches_a_worker(
    fixture_bundle: Fixture, client: EngineClient
) -> None:
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical")
    with pytest.raises(EngineError) as caught:
        client.load(Load(str(target), str(draft), draft_length=17))
    assert caught.value.code == "bad_request" and "out of range (1 to 16)" in caught.value.message
    assert client.pid is None
    loaded = client.load(Load(str(target), str(draft), draft_length=2))  # the same pair, in range
    assert loaded.draft_length == 2 and client.pid is not None


def test_a_blocked_pair_is_refused_before_a_worker_starts(
    fixture_bundle: Fixture, client: EngineClient
) -> None:
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen35-draft")
    plan = plan_for("quick", recipe_defaults(target, draft))
    with pytest.raises(EngineError) as caught:
        run_sweep(client, target, draft, plan, remeasure=False)
    assert caught.value.code == "blocked_pair"
    assert caught.value.message.startswith("This pair cannot work:")
    assert {r["code"] for r in caught.value.reasons} >= {"vocab_mismatch"}
    assert client.pid is None  # the engine was never asked


def test_the_tune_job_fails_with_the_plans_words(
    fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, draft = fixture_bundle("fast-target"), fixture_bundle("fast-draft")
    monkeypatch.setattr(ram_estimate, "available_memory", lambda: 1_000_000)
    client = EngineClient()
    plan = plan_for("quick", recipe_defaults(target, draft))
    job = TuneJob(target, draft, plan, engine=lambda: nullcontext(client))
    end = job.run()
    # Too little memory for the pair: refused by the plan, in the words the worker used.
    assert end.state == FAILED and end.error.startswith("Not enough memory")
    assert client.pid is None


def test_measuring_a_pack_records_only_a_pair_that_cannot_work(
    fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = EngineClient()
    qwen3, qwen35 = fixture_bundle("qwen3-target"), fixture_bundle("qwen35-draft")
    blocked = measure_target(client, qwen35, qwen3, MeasureOptions(), lambda *_: None)
    assert blocked.refused is not None and blocked.refused.startswith("This pair cannot work")
    # Too little memory here is this computer's, not the pack's: never written as
    # "disabled" into a runtime_config.json others read; the load refuses it.
    target, draft = fixture_bundle("fast-target"), fixture_bundle("fast-draft")
    monkeypatch.setattr(ram_estimate, "available_memory", lambda: 1_000_000)
    with pytest.raises(EngineError) as caught:
        measure_target(client, draft, target, MeasureOptions(), lambda *_: None)
    assert caught.value.code == "not_enough_memory"
    assert client.pid is None  # neither reached a worker
