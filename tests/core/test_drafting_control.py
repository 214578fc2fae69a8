"""The adaptive-drafting controller against simulated pairs whose costs and acceptance are
known exactly (seconds are given, not measured, so nothing here depends on the machine)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from app.core.measure import drafting_control
from app.core.measure.drafting_control import (
    EXPLORE_EVERY,
    FIRST_GAP,
    JUDGE_ROUNDS,
    MAX_GAP,
    PLAIN_EVERY,
    PLAIN_EVERY_SURE,
    PROBE_SHARE,
    DraftingControl,
)

# Rounds until the first judgement: two plain (the first is MNN's clone), one drafted
# (its first draft forward and verify shape are clones too: not judged), then the judged.
FIRST_TRIAL = 3 + JUDGE_ROUNDS


@dataclass
class Pair:
    """A pair with fixed step costs: a verify of L positions costs `verify(L)` seconds."""

    draft_step: float
    verify: Callable[[int], float]
    # Position and a counter -> (the draft's confidence, whether the target accepts it).
    token: Callable[[int, int], tuple[float, bool]]
    lengths: list[int] = field(default_factory=list)  # drafted per round (0: plain)
    tokens: int = 0
    seconds: float = 0.0
    asides: list[drafting_control.Aside] = field(default_factory=list)
    count: int = 0
    catch_up: float = 0.0  # seconds the draft reads before a round that follows plain ones
    first_step: float | None = None  # a round's first draft forward, when dearer (MNN's)

    def run(self, control: DraftingControl, rounds: int) -> None:
        for _ in range(rounds):
            self.round(control)

    def round(self, control: DraftingControl) -> None:
        cap = control.plan()
        if cap == 0:
            control.record(0, 0, 1, 0.0, 0, self.verify(1))
            self.lengths.append(0)
            self.tokens += 1
            self.seconds += self.verify(1)
            return
        if self.catch_up and (not self.lengths or self.lengths[-1] == 0):
            control.read(self.catch_up)  # the draft reads what it missed, between rounds
            self.seconds += self.catch_up
        taken, forwards, verdicts = 0, 0, []
        for i in range(cap):
            forwards += 1
            self.count += 1
            confidence, right = self.token(i, self.count)
            if not control.take(i, confidence):
                break
            taken += 1
            verdicts.append(right)
            if not control.more(i):
                break
        accepted = 0
        while accepted < taken and verdicts[accepted]:
            accepted += 1
        draft_seconds = forwards * self.draft_step
        later = None
        if self.first_step is not None:
            later = (forwards - 1) * self.draft_step
            draft_seconds = self.first_step + later
        target_seconds = self.verify(taken + 1)
        aside = control.record(
            taken, accepted, accepted + 1, draft_seconds, forwards, target_seconds, None, later
        )
        if aside is not None:
            self.asides.append(aside)
        self.lengths.append(taken)
        self.tokens += accepted + 1
        self.seconds += draft_seconds + target_seconds


def settled(lengths: list[int]) -> int | None:
    """The length the rounds settled on: all of them but the rounds that measure another
    length's verify (one in EXPLORE_EVERY at most); None if they did not settle."""
    if not lengths:
        return None
    length, count = Counter(lengths).most_common(1)[0]
    return length if count >= len(lengths) - (len(lengths) // EXPLORE_EVERY + 1) else None


def flat(step: float) -> Callable[[int], float]:
    return lambda length: step


def test_a_draft_that_is_always_right_drafts_to_the_cap_and_stays() -> None:
    pair = Pair(0.1, flat(1.0), lambda i, n: (0.95, True))
    control = DraftingControl(4)
    pair.run(control, 300)
    # Once every shorter length's verify is measured (a round in EXPLORE_EVERY drafts
    # one until then), every round drafts the cap.
    speculative = [k for k in pair.lengths if k]
    assert speculative and all(k == 4 for k in speculative[-80:])
    assert not pair.asides and not control.stepped_aside
    # Plain rounds only to keep the plain step time current: two at first (the first is
    # MNN's clone, not counted), then one every PLAIN_EVERY rounds until drafting surely
    # pays (from the first judgement on here: 3.5x plain), then every PLAIN_EVERY_SURE.
    assert pair.lengths.count(0) == 2 + len(range(PLAIN_EVERY_SURE, 301, PLAIN_EVERY_SURE))
    assert pair.tokens / pair.seconds > 3.0  # ~5 tokens per 1.4 s against 1 per 1 s plain


def test_confidence_that_means_nothing_is_learned_from_acceptance() -> None:
    # Random weights: the draft is never confident, yet always right (an identical draft).
    pair = Pair(0.1, flat(1.0), lambda i, n: (0.001, True))
    control = DraftingControl(4)
    pair.run(control, 300)
    assert all(k == 4 for k in [k for k in pair.lengths if k][-80:])


def test_a_draft_that_never_pays_steps_aside_then_probes_with_growing_gaps() -> None:
    # As costly as its target and never right.
    pair = Pair(1.0, flat(1.0), lambda i, n: (0.5, False))
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert len(pair.asides) == 1
    first = pair.asides[0]
    assert first.high < 1.0 and first.low <= first.speedup <= first.high
    # One token a round (the cap): 1 s drafting, 1 s verifying, never accepted: 6 tokens
    # in 12 s over the judged rounds. No plain step is counted yet (the first is a
    # clone's): the cheapest verify stands in for it.
    assert first.speedup == pytest.approx(6 / 12)
    assert f"{6 / 12:.2f}x plain" in first.describe()
    # The trial (2 plain rounds, then 14 s for 7 tokens) lost 7 s against plain steps:
    # stand aside until that is PROBE_SHARE of the time spent plain.
    gap = math.ceil(7 / PROBE_SHARE)
    assert first.gap == gap > FIRST_GAP and control.stepped_aside
    pair.run(control, gap)
    assert pair.lengths[-gap:] == [0] * gap  # plain for the whole gap
    pair.run(control, JUDGE_ROUNDS)  # the probe confirms: twice the gap
    assert len(pair.asides) == 2 and pair.asides[1].gap == min(2 * gap, MAX_GAP)
    pair.run(control, 5000)
    # Speculation costs a few percent of the time once the gaps have grown.
    assert pair.tokens / pair.seconds > 0.95


def test_a_cheap_trial_steps_aside_for_the_first_gap_then_doubles() -> None:
    # A draft that costs nothing and is never right, and a verify of two positions a
    # fiftieth dearer than a plain step: each trial loses little.
    pair = Pair(0.0, lambda length: 1.0 + 0.02 * (length - 1), lambda i, n: (0.5, False))
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert [a.gap for a in pair.asides] == [FIRST_GAP]
    pair.run(control, FIRST_GAP + JUDGE_ROUNDS)
    assert [a.gap for a in pair.asides] == [FIRST_GAP, 2 * FIRST_GAP]


def test_a_probe_that_reads_much_stands_aside_longer() -> None:
    # The first round of each trial also pays for the draft reading what it missed
    # (40 s here): the gap grows until that is a small share of the plain time.
    pair = Pair(0.5, flat(1.0), lambda i, n: (0.5, False), catch_up=40.0)
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert pair.asides[0].gap >= min(math.ceil(40 / PROBE_SHARE), MAX_GAP)
    pair.run(control, 20 * MAX_GAP)
    assert pair.tokens / pair.seconds > 0.95


def test_a_shapes_first_forward_is_not_taken_for_its_cost() -> None:
    # MNN clones a module on the first forward of a shape (a plain step right after the
    # prompt measured 30x the next ones): were that counted, plain decoding would look
    # 30x slower and a draft that never pays would seem to.
    seen: set[int] = set()

    def verify(length: int) -> float:
        first = length not in seen
        seen.add(length)
        return 30.0 if first else 1.0

    pair = Pair(1.0, verify, lambda i, n: (0.5, False))
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert len(pair.asides) == 1 and pair.asides[0].high < 1.0


def test_a_probe_that_pays_goes_back_to_drafting() -> None:
    state = {"right": False}
    pair = Pair(0.1, flat(1.0), lambda i, n: (0.9, state["right"]))
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert control.stepped_aside
    state["right"] = True  # the subject changed: the draft is right now
    pair.run(control, pair.asides[0].gap + 40)
    assert not control.stepped_aside and len(pair.asides) == 1
    assert pair.lengths[-1] > 0


def test_confident_tokens_are_taken_and_hesitant_ones_stop_the_round() -> None:
    # Position 0 and 1 confident and right; position 2 hesitant and wrong. A verify
    # costs more per position (a compute-bound CPU), so a wasted position costs time.
    def token(i: int, n: int) -> tuple[float, bool]:
        return (0.95, True) if i < 2 else (0.05, False)

    pair = Pair(0.05, lambda length: 0.5 + 0.25 * length, token)
    control = DraftingControl(5)
    pair.run(control, 400)
    late = [k for k in pair.lengths[-50:] if k]
    assert settled(late) == 2, late


def test_stop_below_is_a_floor_under_what_the_controller_learns() -> None:
    pair = Pair(0.1, flat(1.0), lambda i, n: (0.3 if i == 1 else 0.95, True))
    control = DraftingControl(4, stop_below=0.5)
    pair.run(control, 60)
    assert all(k == 1 for k in pair.lengths if k)


def test_a_length_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        DraftingControl(0)


def test_the_first_rounds_draft_the_recommended_length_then_what_pays() -> None:
    # The pack's authors recommend 2 (runtime_config.json); the cap is 5. The draft is
    # cheap and always right, so once measured the controller drafts to the cap.
    pair = Pair(0.05, flat(1.0), lambda i, n: (0.9, True))
    control = DraftingControl(5, start_length=2)
    pair.run(control, FIRST_TRIAL + 20)
    drafted = [k for k in pair.lengths if k]
    assert drafted[:JUDGE_ROUNDS] == [2] * JUDGE_ROUNDS
    assert drafted[-10:] == [5] * 10
    # No recommendation, or one beyond the cap: the cap from the start.
    assert DraftingControl(5, start_length=0).start_length == 5
    assert DraftingControl(5, start_length=9).start_length == 5


def test_a_verify_that_gets_dear_at_some_length_stops_the_rounds_before_it() -> None:
    # Up to 5 positions a verify costs one step, 6 or more two (a kernel that changes
    # with the length): a draft always right drafts 4, not the cap of 6.
    pair = Pair(0.02, lambda length: 1.0 if length <= 5 else 2.0, lambda i, n: (0.95, True))
    control = DraftingControl(6)
    pair.run(control, 400)
    late = [k for k in pair.lengths[-40:] if k]
    assert settled(late) == 4, late


def test_a_dear_next_position_does_not_stop_a_round_whose_next_ones_pay() -> None:
    # The third position costs half a step, every one after it nothing: one position at
    # a time that would stop at 1; looking ahead, the round drafts to the cap.
    pair = Pair(0.02, lambda length: 1.0 if length <= 2 else 1.5, lambda i, n: (0.95, True))
    control = DraftingControl(6)
    pair.run(control, 400)
    late = [k for k in pair.lengths[-40:] if k]
    assert settled(late) == 6, late


def test_plain_rounds_are_frequent_only_while_the_speedup_is_in_doubt() -> None:
    # One token a round, 0.7 s drafting and 1 s verifying, always right: 2 tokens in
    # 1.7 s, 1.18x plain, not surely above SURE: the plain time is kept current.
    pair = Pair(0.7, flat(1.0), lambda i, n: (0.95, True))
    control = DraftingControl(1)
    pair.run(control, 300)
    assert not pair.asides
    assert pair.lengths.count(0) == 2 + len(range(PLAIN_EVERY, 301, PLAIN_EVERY))


def test_a_rounds_dear_first_draft_forward_is_not_taken_for_what_more_tokens_cost() -> None:
    # The first forward feeds the tokens the draft has not seen (3 s here), each next one
    # 0.1 s: one more token costs 0.1 s, so a draft sure and right drafts the cap.
    pair = Pair(0.1, flat(1.0), lambda i, n: (0.95, True), first_step=3.0)
    control = DraftingControl(4)
    pair.run(control, 300)
    assert all(k == 4 for k in [k for k in pair.lengths if k][-80:])


def test_a_round_in_which_mnn_cloned_a_module_is_not_judged() -> None:
    # The engine says when a model fed a length it never had (MNN cloned a module: tens
    # of steps' time). Such rounds, 50 s here against 1 s, must not make a pair that
    # pays (3 tokens in 1.2 s) look as if it does not.
    control = DraftingControl(2)
    for i in range(120):
        cap = control.plan()
        if cap == 0:
            assert control.record(0, 0, 1, 0.0, 0, 1.0) is None
            continue
        taken = 0
        for position in range(cap):
            if not control.take(position, 0.9):
                break
            taken += 1
            if not control.more(position):
                break
        cloned = i % 10 == 5
        seconds = 1.0 + (50.0 if cloned else 0.0)
        aside = control.record(
            taken, taken, taken + 1, 0.1 * taken, taken, seconds, None, None, cloned
        )
        assert aside is None, i
    assert not control.stepped_aside and control.asides == 0
