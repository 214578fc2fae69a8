"""Long prompts are read in chunks: the same logits as one forward, progress after each
chunk, and a cancel honoured between two (benchmarks/prefill.py measures the speed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Done, Generate, Load, Rounds
from app.engine.worker.decoder import Decoder
from app.engine.worker.mnn_llm import MnnLlm
from app.engine.worker.prefill import PREFILL_FIRST_CHUNK

Fixture = Callable[[str], Path]
TEXT = "The river runs through the old town, past the mill and under the stone bridge. "
ROOMY = {"max_all_tokens": 8192}


@pytest.mark.parametrize("memory", ["normal", "low"])
def test_chunked_prefill_gives_one_forwards_logits(memory: str, fixture_bundle: Fixture) -> None:
    model = MnnLlm(fixture_bundle("fast-target"), {"memory": memory})
    try:
        ids = model.encode(TEXT * 80)[:1200]
        model.begin_prefill()
        whole = model.forward(ids)[-1].copy()
        model.reset()
        reports: list[int] = []
        row, fed = Decoder(model, None, 0, [])._prefill(
            model, ids, lambda _model, done, _total: reports.append(done)
        )
        assert fed == len(ids) and model.kv_tokens == ids
        assert reports[0] == PREFILL_FIRST_CHUNK and reports == sorted(reports)
        assert reports[-1] == len(ids)
        assert len(reports) >= 2  # really chunked
        assert int(np.argmax(row)) == int(np.argmax(whole))
        np.testing.assert_allclose(row, whole, atol=1e-3)  # summation order only
    finally:
        model.close()


def _progress(events: list[Rounds]) -> list[tuple[str, int, int]]:
    return [(e.prefill_model, e.prefill_done, e.prefill_total) for e in events if e.prefill_total]


def test_a_long_prompt_reports_progress_for_each_model(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    client.run(
        Load(
            target=str(fixture_bundle("fast-target")),
            draft=str(fixture_bundle("fast-draft")),
            target_config=ROOMY,
            draft_config=ROOMY,
        )
    )
    events: list[Rounds] = []
    done = client.run(Generate(prompt=TEXT * 40, max_tokens=8, chat=False), on_rounds=events.append)
    progress = _progress(events)
    total = done.stats.prompt_tokens
    target = [p for p in progress if p[0] == "target"]
    draft = [p for p in progress if p[0] == "draft"]
    assert target and draft
    assert all(t == total for _, _, t in target)
    assert [d for _, d, _ in target] == sorted(d for _, d, _ in target)
    assert target[-1][1] == total and draft[-1][1] == draft[-1][2]  # the last says done
    # The draft reads the prompt after the target's first token is out.
    first_token = next(i for i, e in enumerate(events) if e.tokens)
    assert events.index(next(e for e in events if e.prefill_model == "draft")) > first_token
    assert done.stats.draft_prefill_seconds > 0 and done.stats.prefill_seconds > 0
    assert done.stats.tokens == 8


def test_a_cancel_during_prefill_stops_before_the_prompt_is_read(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    client.run(Load(target=str(fixture_bundle("fast-target")), target_config=ROOMY))
    request_id = client.send(Generate(prompt=TEXT * 200, max_tokens=8, chat=False))
    client.cancel(request_id)  # lands while the first chunk is read, or before
    events: list[Rounds] = []
    done = client.wait(request_id, events.append)
    assert isinstance(done, Done)
    assert done.stopped_by == "cancelled" and done.tokens == ()
    progress = _progress(events)
    assert progress and progress[-1][1] < progress[-1][2]  # stopped part way
    # The engine is usable at once, and its cache holds only what was fed.
    again = client.run(Generate(prompt="Hello", max_tokens=4))
    assert again.stats.tokens == 4
