"""Adaptive drafting and the per-round stop on real MNN with the fixture pairs: greedy
output identical to plain, counts that add up round by round, and stepping aside on a
pair that cannot pay (the independent draft: never right, as costly as its target)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.measure.drafting_control import JUDGE_ROUNDS, DraftingControl
from app.core.measure.metrics import SEEDED
from app.core.recipe.drafting_settings import DRAFTING_FILE, DraftingSettings, write_drafting
from app.core.recipe.sampler_settings import sampler_settings
from app.engine.protocol import Generate, Mode, Round, Rounds
from app.engine.worker import decoder, drafting, work_clock
from app.engine.worker.decoder import PROBE_WINDOW, Generation
from app.engine.worker.session import Session

NORMAL = {"memory": "normal", "thread_num": 1}
PROMPT = "Tell me a short story about a lighthouse keeper and a storm."
ADAPTIVE = DraftingSettings(adaptive=True)
Fixture = Callable[[str], Path]


def _load(session: Session, target: Path, draft: Path, d: int = 4) -> None:
    session.load(str(target), str(draft), dict(NORMAL), dict(NORMAL), d)


def _run(session: Session, mode: Mode, tokens: int, **extra: Any) -> tuple[Generation, list[Round]]:
    events: list[Rounds] = []
    session.reset()
    result = session.generate(
        Generate(prompt=PROMPT, max_tokens=tokens, mode=mode, ignore_stop=True, **extra),
        events.append,
        lambda: False,
    )
    return result, [r for e in events for r in e.rounds]


def _counts_add_up(result: Generation, rounds: list[Round], d: int) -> None:
    stats = result.stats
    assert stats.rounds == len(rounds)
    assert stats.drafted == sum(r.drafted for r in rounds)
    assert stats.accepted == sum(r.accepted for r in rounds) == sum(stats.position_accepted)
    assert all(0 <= r.accepted <= r.drafted <= d for r in rounds)
    assert stats.tokens == len(result.tokens) == stats.first_tokens + sum(r.emitted for r in rounds)
    assert stats.from_draft + stats.corrections == stats.tokens
    # Position i is reached exactly when the round drafted it and i-1 was accepted.
    for i in range(d):
        assert stats.position_reached[i] == sum(
            1 for r in rounds if r.drafted > i and (i == 0 or r.accepted >= i)
        )


def test_identical_draft_adaptive_is_lossless_and_accepts_all_it_drafts(
    session: Session, fixture_bundle: Fixture
) -> None:
    _load(session, fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical"))
    plain, _ = _run(session, Mode.PLAIN, 200)
    spec, rounds = _run(session, Mode.SPECULATIVE, 200, drafting=ADAPTIVE)
    assert spec.tokens == plain.tokens and spec.text == plain.text
    assert spec.stats.drafting == "adaptive"
    assert spec.stats.drafted > 0 and spec.stats.accepted == spec.stats.drafted
    _counts_add_up(spec, rounds, 4)
    # Nothing drafted is cut by max_tokens: the last round drafts only what is left.
    assert all(r.emitted == r.drafted + 1 for r in rounds)


def test_fast_pair_adaptive_is_lossless(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle("fast-target"), fixture_bundle("fast-draft"))
    plain, _ = _run(session, Mode.PLAIN, 160)
    spec, rounds = _run(session, Mode.SPECULATIVE, 160, drafting=ADAPTIVE)
    assert spec.tokens == plain.tokens
    _counts_add_up(spec, rounds, 4)


def test_a_pair_that_cannot_pay_steps_aside_and_says_why(
    session: Session, fixture_bundle: Fixture
) -> None:
    _load(session, fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-independent"))
    plain, _ = _run(session, Mode.PLAIN, 300)
    spec, rounds = _run(session, Mode.SPECULATIVE, 300, drafting=ADAPTIVE)
    assert spec.tokens == plain.tokens
    _counts_add_up(spec, rounds, 4)
    stats = spec.stats
    assert stats.asides >= 1 and "drafting did not pay" in stats.aside_note
    noted = [i for i, r in enumerate(rounds) if r.note]
    assert len(noted) == stats.asides
    # The rounds right after the note are plain steps while it stands aside.
    first = noted[0]
    assert rounds[first + 1].aside and rounds[first + 1].drafted == 0
    assert stats.aside_rounds == sum(r.aside for r in rounds) > stats.rounds / 3
    # The next reply starts from what this one learned (the pair's controller).
    control = session.control
    assert control is not None and control.asides == stats.asides
    again, _ = _run(session, Mode.SPECULATIVE, 40, drafting=ADAPTIVE)
    assert again.tokens == plain.tokens[:40]
    assert session.control is control


class AsideThenProbe(DraftingControl):
    """Stands aside for the first `plain` rounds, then probes and drafts the cap every
    round (what a probe does, made certain; the real controller decides by timing)."""

    def __init__(self, cap: int, plain: int) -> None:
        super().__init__(cap)
        self.left = plain

    @property
    def stepped_aside(self) -> bool:
        return self.left > 0

    @property
    def probing(self) -> bool:
        return self.left == 0

    def plan(self) -> int:
        if self.left:
            self.left -= 1
            return 0
        return self.max_length

    def take(self, position: int, confidence: float) -> bool:
        return True

    def more(self, position: int) -> bool:
        return position + 1 < self.max_length

    def record(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_a_probe_after_standing_aside_reads_only_the_latest_tokens_and_stays_exact(
    session: Session, fixture_bundle: Fixture
) -> None:
    # Reading the hundreds of tokens decoded plain would cost more than the probe saves;
    # the draft reads the latest PROBE_WINDOW and proposes from them, the verify keeps
    # the output the target's own.
    _load(session, fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical"))
    plain, _ = _run(session, Mode.PLAIN, 260)
    control = AsideThenProbe(4, plain=200)
    session.control = control
    spec, rounds = _run(session, Mode.SPECULATIVE, 260, drafting=ADAPTIVE)
    assert spec.tokens == plain.tokens
    _counts_add_up(spec, rounds, 4)
    assert [r.drafted for r in rounds[:200]] == [0] * 200
    assert spec.stats.drafted > 0
    prompt = spec.stats.prompt_tokens
    assert session.draft is not None
    # The draft holds the window and what was drafted since, not the prompt and the
    # 200 plain tokens before it.
    held = len(session.draft.kv_tokens)
    assert held < prompt + 200
    assert held <= PROBE_WINDOW + sum(r.emitted for r in rounds[200:]) + 1


def test_the_per_round_stop_ends_rounds_early_and_keeps_the_output(
    session: Session, fixture_bundle: Fixture
) -> None:
    _load(session, fixture_bundle("fast-target"), fixture_bundle("fast-draft"))
    plain, _ = _run(session, Mode.PLAIN, 120)
    fixed, _ = _run(session, Mode.SPECULATIVE, 120, drafting=DraftingSettings(False))
    stopped, rounds = _run(session, Mode.SPECULATIVE, 120, drafting=DraftingSettings(False, 0.5))
    assert stopped.tokens == fixed.tokens == plain.tokens
    assert fixed.stats.drafted == 4 * fixed.stats.rounds
    # The fast draft is sure of some tokens and not of others: rounds of every length.
    assert len({r.drafted for r in rounds}) > 2
    assert stopped.stats.drafted < 4 * stopped.stats.rounds
    _counts_add_up(stopped, rounds, 4)
    # Nothing is surer than certain: a stop at 1 ends almost every round at once.
    never, never_rounds = _run(session, Mode.SPECULATIVE, 60, drafting=DraftingSettings(False, 1.0))
    assert never.tokens == plain.tokens[:60]
    assert never.stats.drafted < never.stats.rounds
    _counts_add_up(never, never_rounds, 4)


def test_the_draft_packs_settings_file_is_read_and_a_broken_one_named(
    session: Session, fixture_bundle: Fixture, bundle_copy: Callable[..., Path]
) -> None:
    draft = bundle_copy("qwen3-draft-identical")
    write_drafting(draft, DraftingSettings(adaptive=True))
    _load(session, fixture_bundle("qwen3-target"), draft)
    spec, _ = _run(session, Mode.SPECULATIVE, 30)
    assert spec.stats.drafting == "adaptive"

    (draft / DRAFTING_FILE).write_text(json.dumps({"adaptive": "yes"}))
    loaded = session.load(
        str(fixture_bundle("qwen3-target")), str(draft), dict(NORMAL), dict(NORMAL), 4
    )
    assert loaded.drafting_problem is not None
    assert DRAFTING_FILE in loaded.drafting_problem and "true or false" in loaded.drafting_problem
    fixed = _run(session, Mode.SPECULATIVE, 30)[0].stats  # the default: fixed drafting
    assert fixed.drafting == "fixed" and fixed.drafted == 4 * fixed.rounds


def test_adaptive_drafting_starts_at_the_packs_recommended_length(
    session: Session, fixture_bundle: Fixture, bundle_copy: Callable[..., Path]
) -> None:
    draft = bundle_copy("qwen3-draft-identical")
    advice = {"recommended": {"draft_predict_length": 2}}
    (draft / "runtime_config.json").write_text(json.dumps(advice))
    _load(session, fixture_bundle("qwen3-target"), draft, d=4)
    spec, rounds = _run(session, Mode.SPECULATIVE, 60, drafting=ADAPTIVE)
    assert session.control is not None and session.control.start_length == 2
    drafted = [r.drafted for r in rounds if r.drafted]
    assert drafted[:JUDGE_ROUNDS] == [2] * JUDGE_ROUNDS
    _counts_add_up(spec, rounds, 4)


def test_a_seed_repeats_a_sampled_reply_with_adaptive_drafting_on(
    session: Session, fixture_bundle: Fixture
) -> None:
    # Lengths that follow the machine's speed would draw another reply from the same
    # seed: with a seed the rounds draft the fixed length, and the figures say why.
    _load(session, fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-noisy"))
    sampler = sampler_settings({"temperature": 1.0, "top_k": 20})
    first, rounds = _run(session, Mode.SPECULATIVE, 60, drafting=ADAPTIVE, sampler=sampler, seed=7)
    again, _ = _run(session, Mode.SPECULATIVE, 60, drafting=ADAPTIVE, sampler=sampler, seed=7)
    assert first.tokens == again.tokens
    assert first.stats.drafting == SEEDED and first.stats.asides == 0
    assert all(r.drafted == 4 for r in rounds)
    unseeded, _ = _run(session, Mode.SPECULATIVE, 20, drafting=ADAPTIVE, sampler=sampler)
    assert unseeded.stats.drafting == "adaptive"


def test_a_judgement_on_a_busy_computer_says_so(
    session: Session, fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if other programs took most of the CPU: the worker's thread gets 40 % of the
    # time it is charged by the wall. (Scaling its real CPU time keeps the judgement
    # itself on work, whatever the machine running this test is doing.)
    def busy_clock() -> float:
        return time.thread_time() * 0.4

    for module in (work_clock, decoder, drafting):
        monkeypatch.setattr(module, "work_seconds", busy_clock)
    _load(session, fixture_bundle("fast-target"), fixture_bundle("fast-draft"))
    spec, rounds = _run(session, Mode.SPECULATIVE, 300, drafting=ADAPTIVE)
    said = [r.kept_note for r in rounds if r.kept_note]
    # The pair's first check (it pays) is said once, busy and in words.
    assert len(said) == 1 and said[0].startswith("drafting pays: ")
    assert "this computer was busy while it was judged" in said[0]
    assert spec.stats.asides == 0 and not any(r.note for r in rounds)
