"""The draft/verify loop on real MNN with the fixture bundles, checked against ground truth.

These run in the test process (the Session is the same object the worker holds) to keep
them quick; tests/engine/test_engine_worker.py covers the process boundary.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.core.infra.errors import EngineError
from app.core.measure.metrics import DecodeStats
from app.core.recipe.drafting_settings import DraftingSettings
from app.core.recipe.files import draft_settings
from app.engine.protocol import ChatTurn, Generate, Mode, Rounds
from app.engine.worker.decoder import Decoder
from app.engine.worker.mnn_llm import MnnLlm
from app.engine.worker.session import Session
from tests.helpers.mnn_graphs import graph_bytes, transformer_ops

NORMAL = {"memory": "normal", "thread_num": 1}
FIXED = DraftingSettings(adaptive=False)
PROMPT = "Tell me a short story about a lighthouse keeper and a storm."
Fixture = Callable[[str], Path]


def _load(session: Session, fixture_bundle: Fixture, draft: str, d: int = 3) -> None:
    session.load(
        str(fixture_bundle("qwen3-target" if not draft.startswith("fast") else "fast-target")),
        str(fixture_bundle(draft)),
        dict(NORMAL),
        dict(NORMAL),
        d,
    )


def _run(session: Session, mode: Mode, tokens: int = 120, **extra: Any) -> dict[str, Any]:
    """A generation; fixed-length drafting unless `drafting` says otherwise (the counts
    checked here are a fixed length's)."""
    extra.setdefault("drafting", FIXED)
    rounds: list[Rounds] = []
    session.reset()
    started = time.perf_counter()
    result = session.generate(
        Generate(prompt=PROMPT, max_tokens=tokens, mode=mode, ignore_stop=True, **extra),
        rounds.append,
        lambda: False,
    )
    return {"result": result, "events": rounds, "wall": time.perf_counter() - started}


def _check_counts(stats: DecodeStats, flags: list[bool]) -> None:
    assert stats.from_draft + stats.corrections == stats.tokens
    assert sum(flags) == stats.from_draft
    assert stats.drafted == stats.draft_length * stats.rounds
    assert stats.accepted == sum(stats.position_accepted)
    assert stats.position_reached[0] == stats.rounds
    for i in range(1, stats.draft_length):
        # Position i is reached exactly when position i-1 was accepted.
        assert stats.position_reached[i] == stats.position_accepted[i - 1]
    assert stats.tokens == len(flags)
    assert stats.first_tokens == 1


def _flags(events: list[Rounds]) -> list[bool]:
    return [f for e in events for f in e.from_draft]


def test_identical_draft_accepts_everything_and_is_lossless(
    session: Session, fixture_bundle: Fixture
) -> None:
    _load(session, fixture_bundle, "qwen3-draft-identical")
    plain = _run(session, Mode.PLAIN)["result"]
    spec_run = _run(session, Mode.SPECULATIVE)
    spec = spec_run["result"]
    assert spec.stats.acceptance == 1.0
    assert spec.tokens == plain.tokens
    assert spec.text == plain.text
    assert spec.stats.per_position_acceptance == [1.0, 1.0, 1.0]
    _check_counts(spec.stats, _flags(spec_run["events"]))
    # All d drafts plus the target's bonus token in every round; the last one is cut
    # short by max_tokens. 120 tokens, the first from the prefill: 119 in rounds of 4.
    stats = spec.stats
    decode = 120 - stats.first_tokens
    assert stats.rounds == -(-decode // (stats.draft_length + 1)) == 30
    assert stats.accepted == stats.drafted == stats.draft_length * stats.rounds
    assert stats.mean_accepted_length == decode / stats.rounds
    assert stats.target_forwards == stats.rounds  # one batched verify per round
    # The times add up and fit inside the wall clock around the call.
    assert stats.prefill_seconds + stats.decode_seconds <= spec_run["wall"]
    assert stats.target_seconds + stats.draft_seconds <= stats.decode_seconds
    assert stats.tok_s == decode / stats.decode_seconds
    assert stats.tok_s >= decode / spec_run["wall"]


def test_noisy_draft_is_partly_accepted_and_still_lossless(
    session: Session, fixture_bundle: Fixture
) -> None:
    _load(session, fixture_bundle, "qwen3-draft-noisy")
    plain = _run(session, Mode.PLAIN, 200)["result"]
    spec_run = _run(session, Mode.SPECULATIVE, 200)
    spec = spec_run["result"]
    assert spec.stats.acceptance is not None
    assert 0.2 < spec.stats.acceptance < 0.99
    assert spec.tokens == plain.tokens
    _check_counts(spec.stats, _flags(spec_run["events"]))


def _truth(target: MnnLlm, prompt: list[int], count: int) -> list[int]:
    """The target's own greedy tokens after the prompt, one forward per token."""
    target.begin_prefill()
    tokens = [int(np.argmax(target.forward(prompt)[-1]))]
    while len(tokens) < count:
        tokens.append(int(np.argmax(target.forward([tokens[-1]])[-1])))
    return tokens


def _reference_counts(
    draft: MnnLlm, prompt: list[int], truth: list[int], d: int, max_tokens: int
) -> dict[str, Any]:
    """Speculative decoding's counts, worked out from the draft's own greedy proposals
    and the target's tokens: per round, how long a prefix of the d proposals matches."""
    draft.begin_prefill()
    draft.forward(prompt)
    out = [truth[0]]  # the first token comes from the target's prefill, outside any round
    counts: dict[str, Any] = {"rounds": 0, "drafted": 0, "accepted": 0, "from_draft": 0}
    reached, accepted = [0] * d, [0] * d
    while len(out) < max_tokens:
        seq = prompt + out
        for token in seq[len(draft.kv_tokens) :]:  # what the draft has not seen, a step each
            rows = draft.forward([token])
        proposal: list[int] = []
        for i in range(d):
            proposal.append(int(np.argmax(rows[-1])))
            if i < d - 1:
                rows = draft.forward([proposal[-1]])
        draft.truncate(len(seq))  # only the true tokens stay
        pos = len(out)
        n = 0
        while n < d and proposal[n] == truth[pos + n]:
            n += 1
        emitted = min(n + 1, max_tokens - pos)  # the matches and the target's own token
        counts["rounds"] += 1
        counts["drafted"] += d
        counts["accepted"] += n
        counts["from_draft"] += min(n, emitted)
        for i in range(min(n + 1, d)):
            reached[i] += 1
        for i in range(n):
            accepted[i] += 1
        out.extend(truth[pos : pos + emitted])
    counts.update(tokens=out, position_reached=reached, position_accepted=accepted)
    return counts


def test_partial_acceptance_matches_a_step_by_step_reference(
    session: Session, fixture_bundle: Fixture
) -> None:
    d, max_tokens = 3, 120
    _load(session, fixture_bundle, "qwen3-draft-noisy", d)
    session.reset()
    prompt, _ = session.prompt_ids(Generate(prompt=PROMPT))
    spec = session.generate(
        Generate(
            prompt_ids=tuple(prompt),
            max_tokens=max_tokens,
            mode=Mode.SPECULATIVE,
            ignore_stop=True,
            drafting=FIXED,
        ),
        lambda _event: None,
        lambda: False,
    )
    session.unload()

    target_path, draft_path = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-noisy")
    target = MnnLlm(target_path, dict(NORMAL))
    try:
        truth = _truth(target, prompt, max_tokens + d)
    finally:
        target.close()
    draft = MnnLlm(draft_path, draft_settings(draft_path, dict(NORMAL)))
    try:
        ref = _reference_counts(draft, prompt, truth, d, max_tokens)
    finally:
        draft.close()

    assert 0 < ref["accepted"] < ref["drafted"]  # the noisy draft is partly right
    stats = spec.stats
    assert spec.tokens == ref["tokens"] == truth[:max_tokens]
    assert (stats.rounds, stats.drafted, stats.accepted, stats.from_draft) == (
        ref["rounds"],
        ref["drafted"],
        ref["accepted"],
        ref["from_draft"],
    )
    assert stats.position_reached == ref["position_reached"]
    assert stats.position_accepted == ref["position_accepted"]
    assert stats.acceptance == ref["accepted"] / ref["drafted"]


def test_independent_draft_is_rejected(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "qwen3-draft-independent")
    spec_run = _run(session, Mode.SPECULATIVE, 150)
    spec = spec_run["result"]
    assert spec.stats.acceptance is not None
    assert spec.stats.acceptance < 0.1
    _check_counts(spec.stats, _flags(spec_run["events"]))


def test_fast_pair_accepts_long_runs(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "fast-draft", d=4)
    spec = _run(session, Mode.SPECULATIVE, 150)["result"]
    assert spec.stats.mean_accepted_length is not None
    assert spec.stats.mean_accepted_length > 2


def test_plain_mode_counts(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "qwen3-draft-noisy")
    plain = _run(session, Mode.PLAIN, 50)["result"]
    stats = plain.stats
    assert stats.tokens == 50 == len(plain.tokens)
    assert stats.rounds == 49 and stats.first_tokens == 1
    assert stats.mean_accepted_length == 1.0
    assert stats.acceptance is None and stats.draft_forwards == 0


def test_stop_token_and_max_tokens(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "qwen3-draft-identical")
    free = _run(session, Mode.SPECULATIVE, 300)["result"]
    assert free.stopped_by == "max_tokens" and len(free.tokens) == 300
    stop = free.tokens[37]
    # Pretend the 38th token is a stop token: generation must end right there.
    assert session.target_info is not None
    decoder = Decoder(session.target, session.draft, 3, [stop])  # type: ignore[arg-type]
    session.reset()
    ids, _ = session.prompt_ids(Generate(prompt=PROMPT))
    cut = decoder.generate(ids, 300)
    assert cut.stopped_by == "stop_token"
    assert cut.tokens == free.tokens[: free.tokens.index(stop) + 1]
    assert cut.stats.tokens == len(cut.tokens)


def test_streamed_text_is_the_decoded_bytes(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "qwen3-draft-noisy")
    run = _run(session, Mode.SPECULATIVE, 200)
    result = run["result"]
    assert session.target is not None
    whole = b"".join(session.target.token_bytes(t) for t in result.tokens)
    assert result.text == whole.decode("utf-8", "replace")
    assert "".join(e.text for e in run["events"]) == result.text


def test_second_turn_prefills_only_new_tokens(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "qwen3-draft-noisy")
    first_messages = [{"role": "user", "content": "Name three rivers."}]
    first_ids, _ = session.prompt_ids(
        Generate(messages=tuple(ChatTurn(**m) for m in first_messages))
    )
    first = session.generate(
        Generate(
            messages=tuple(ChatTurn(**m) for m in first_messages),
            max_tokens=40,
            mode=Mode.SPECULATIVE,
        ),
        lambda e: None,
        lambda: False,
    )
    messages = [
        *first_messages,
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": "And three mountains?"},
    ]
    spoken = first_ids + first.tokens
    ids, _ = session.prompt_ids(Generate(messages=tuple(ChatTurn(**m) for m in messages)))
    # The earlier turns keep the very ids they were generated with.
    assert ids[: len(spoken)] == spoken
    second = session.generate(
        Generate(
            messages=tuple(ChatTurn(**m) for m in messages), max_tokens=40, mode=Mode.SPECULATIVE
        ),
        lambda e: None,
        lambda: False,
    )
    # Only the new turn is run; at most the reply's last token, never fed, joins it.
    assert 0 < second.stats.prefill_fed <= len(ids) - len(spoken) + 1
    assert second.stats.prompt_tokens == len(ids)

    fresh = Session()
    try:
        _load(fresh, fixture_bundle, "qwen3-draft-noisy")
        again = fresh.generate(
            Generate(prompt_ids=tuple(ids), max_tokens=40, mode=Mode.SPECULATIVE),
            lambda e: None,
            lambda: False,
        )
        assert again.stats.prefill_fed == len(ids)
        assert again.tokens == second.tokens
    finally:
        fresh.unload()


def test_linear_rollback_path_matches_plain(session: Session, fixture_bundle: Fixture) -> None:
    """The re-prefill used for linear attention gives the same tokens as plain decoding."""
    _load(session, fixture_bundle, "qwen3-draft-noisy")
    plain = _run(session, Mode.PLAIN, 80)["result"]
    assert session.target is not None and session.draft is not None
    decoder = Decoder(session.target, session.draft, 3, [], target_linear=True, draft_linear=True)
    session.reset()
    ids, _ = session.prompt_ids(Generate(prompt=PROMPT))
    spec = decoder.generate(ids, 80)
    assert spec.tokens == plain.tokens
    assert 0 < spec.stats.acceptance < 1  # type: ignore[operator]


def test_qwen35_pair_is_correct(session: Session, fixture_bundle: Fixture) -> None:
    """Linear attention + mrope: verified step by step, rejections rebuild the draft."""
    path = str(fixture_bundle("qwen35-draft"))
    info = session.load(path, path, dict(NORMAL), dict(NORMAL), 2)
    assert info.linear_attention is True
    assert info.verify == "stepwise"
    plain = _run(session, Mode.PLAIN, 60)["result"]
    spec_run = _run(session, Mode.SPECULATIVE, 60)
    spec = spec_run["result"]
    assert spec.tokens == plain.tokens
    assert spec.stats.acceptance == 1.0
    _check_counts(spec.stats, _flags(spec_run["events"]))
    # Every accepted token cost the target one step of its own, plus one per round.
    assert spec.stats.target_forwards == spec.stats.accepted + spec.stats.rounds


def test_stepwise_verify_matches_batched(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, "qwen3-draft-noisy")
    batched = _run(session, Mode.SPECULATIVE, 80)["result"]
    assert session.target is not None and session.draft is not None
    decoder = Decoder(session.target, session.draft, 3, [], verify_stepwise=True)
    session.reset()
    ids, _ = session.prompt_ids(Generate(prompt=PROMPT))
    stepwise = decoder.generate(ids, 80)
    assert stepwise.tokens == batched.tokens
    assert stepwise.stats.accepted == batched.stats.accepted


def test_blocked_pair_is_refused_with_reasons(session: Session, fixture_bundle: Fixture) -> None:
    with pytest.raises(EngineError) as caught:
        session.load(str(fixture_bundle("qwen3-target")), str(fixture_bundle("qwen35-draft")))
    assert caught.value.code == "blocked_pair"
    codes = {r["code"] for r in caught.value.reasons}
    assert {"vocab_mismatch", "family_mismatch", "attention_mismatch"} <= codes
    assert session.target is None


def test_broken_bundle_is_an_error(session: Session, bundle_copy: Callable[..., Path]) -> None:
    pack = bundle_copy()
    (pack / "llm.mnn.weight").write_bytes(b"")
    with pytest.raises(EngineError) as caught:
        session.load(str(pack))
    assert caught.value.code == "empty_file"
    assert "llm.mnn.weight" in caught.value.message


def test_failed_draft_load_leaves_nothing_half_loaded(
    session: Session, fixture_bundle: Fixture, bundle_copy: Callable[..., Path]
) -> None:
    draft = bundle_copy("qwen3-draft-noisy")
    # A graph DraftDeck reads (its ops are MNN 3.6.1's) that MNN cannot load: no tensors.
    (draft / "llm.mnn").write_bytes(graph_bytes(transformer_ops(2)))
    with pytest.raises(EngineError):
        session.load(str(fixture_bundle("qwen3-target")), str(draft))
    assert session.target is None and session.target_info is None
    with pytest.raises(EngineError, match="no model is loaded"):
        session.generate(Generate(prompt="hi"), lambda e: None, lambda: False)


def test_lossless_expectation_follows_the_saved_recipe(
    session: Session, fixture_bundle: Fixture, bundle_copy: Callable[..., Path]
) -> None:
    target = bundle_copy("qwen3-target")
    config = json.loads((target / "config.json").read_text())
    assert config["memory"] == "low"
    draft = str(fixture_bundle("qwen3-draft-noisy"))
    assert session.load(str(target), draft).lossless_expected is False
    config["memory"] = "normal"
    (target / "config.json").write_text(json.dumps(config))
    # The draft's recipe says memory low; only the target's verify decides the output.
    assert session.load(str(target), draft).lossless_expected is True
    qwen35 = str(fixture_bundle("qwen35-draft"))
    stepwise = session.load(qwen35, qwen35)
    assert stepwise.verify == "stepwise" and stepwise.lossless_expected is True
