"""The adaptive-drafting controller against simulated pairs whose costs and acceptance are
known exactly (seconds are given, not measured, so nothing here depends on the machine)."""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from app.core.measure.drafting_check import ASIDE_PAIRS, CLEAR_PAIRS, Judgement
from app.core.measure.drafting_control import (
    EXPLORE_EVERY,
    FIRST_GAP,
    JUDGE_ROUNDS,
    MAX_GAP,
    PLAIN_EVERY,
    PROBE_SHARE,
    START_PLAIN,
    WINDOW,
    DraftingControl,
)
from app.core.measure.step_times import RoundMeasure

# Rounds until the first check decides: START_PLAIN plain (the first is MNN's clone), one
# drafted (its first draft forward and verify shape are clones too: not judged), then
# pairs of a plain round and a speculative one: ASIDE_PAIRS to stand aside, CLEAR_PAIRS
# to find that it pays.
FIRST_TRIAL = START_PLAIN + 1 + 2 * ASIDE_PAIRS
FIRST_CLEAR = START_PLAIN + 1 + 2 * CLEAR_PAIRS


def quiet(seconds: float) -> float:
    return 1.0


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
    asides: list[Judgement] = field(default_factory=list)
    kept: list[Judgement] = field(default_factory=list)  # said: judged on a busy computer
    count: int = 0
    catch_up: float = 0.0  # seconds the draft reads before a round that follows plain ones
    first_step: float | None = None  # a round's first draft forward, when dearer (MNN's)
    # Another process's load: how many times slower every step is at a moment (seconds
    # of this pair's decoding so far); `work` counts the seconds as on a quiet computer.
    # `cpu`: the controller is told work seconds (a thread's CPU time: load adds none)
    # and the wall's apart; else only the wall's (Windows), load and all.
    load: Callable[[float], float] = quiet
    work: float = 0.0
    cpu: bool = False

    def run(self, control: DraftingControl, rounds: int) -> None:
        for _ in range(rounds):
            self.round(control)

    def round(self, control: DraftingControl) -> None:
        cap = control.plan()
        slow = self.load(self.seconds)
        told = 1.0 if self.cpu else slow
        if cap == 0:
            step = self.verify(1)
            control.record(RoundMeasure(0, 0, 1, told * step, wall_seconds=slow * step))
            self.lengths.append(0)
            self.tokens += 1
            self.seconds += slow * self.verify(1)
            self.work += self.verify(1)
            return
        if self.catch_up and (not self.lengths or self.lengths[-1] == 0):
            control.read(self.catch_up)  # the draft reads what it missed, between rounds
            self.seconds += self.catch_up
            self.work += self.catch_up
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
        self.work += draft_seconds + target_seconds
        judged = control.record(
            RoundMeasure(
                drafted=taken,
                accepted=accepted,
                emitted=accepted + 1,
                target_seconds=told * target_seconds,
                draft_seconds=told * draft_seconds,
                draft_forwards=forwards,
                later_seconds=later if later is None else told * later,
                wall_seconds=slow * (draft_seconds + target_seconds),
            )
        )
        draft_seconds, target_seconds = slow * draft_seconds, slow * target_seconds
        if judged is not None:
            (self.asides if judged.aside else self.kept).append(judged)
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
    # Plain rounds only to judge and keep the plain step time current: two at first (the
    # first is MNN's clone, not counted), the first check's half, then one every
    # PLAIN_EVERY rounds until drafting surely pays (from the first check on here: 3.5x
    # plain), then every PLAIN_EVERY_SURE.
    plain = [i for i, k in enumerate(pair.lengths) if k == 0]
    assert plain[:START_PLAIN] == list(range(START_PLAIN))
    # The check's plain halves, every other round (one pair more when a round explored
    # a shorter length: a new shape, not judged); then none until PLAIN_EVERY_SURE.
    halves = plain[START_PLAIN:]
    assert CLEAR_PAIRS <= len(halves) <= CLEAR_PAIRS + 1
    assert all(b - a == 2 for a, b in itertools.pairwise(halves))
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
    first = pair.asides[0].found
    assert first.high < 1.0 and first.low <= first.speedup <= first.high
    # One token a round (the cap): 1 s drafting, 1 s verifying, never accepted, each
    # beside a plain step of 1 s: half the speed of plain.
    assert first.speedup == pytest.approx(1 / 2) and first.pairs == ASIDE_PAIRS
    assert f"{1 / 2:.2f}x plain" in pair.asides[0].describe()
    assert "busy" not in pair.asides[0].describe()  # a quiet computer: not said
    # The check lost a plain step a pair, and one more in its first drafted round (MNN's
    # clone, not judged): stand aside until that is PROBE_SHARE of the plain steps after.
    gap = math.ceil((ASIDE_PAIRS + 1) / PROBE_SHARE)
    assert pair.asides[0].gap == gap > FIRST_GAP and control.stepped_aside
    pair.run(control, gap)
    assert pair.lengths[-gap:] == [0] * gap  # plain for the whole gap
    pair.run(control, 2 * ASIDE_PAIRS)  # the probe confirms: twice the gap, at most MAX_GAP
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
    pair.run(control, FIRST_GAP + 2 * ASIDE_PAIRS)
    assert [a.gap for a in pair.asides] == [FIRST_GAP, 2 * FIRST_GAP]


def test_a_probe_that_reads_much_stands_aside_longer() -> None:
    # Each speculative round after a plain one also pays for the draft reading what it
    # missed (4 s here): the gap grows until that is a small share of the plain time,
    # but never past MAX_GAP: a chat reaches its next trial.
    pair = Pair(0.5, flat(1.0), lambda i, n: (0.5, False), catch_up=4.0)
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert pair.asides[0].gap == MAX_GAP < math.ceil(4.0 * ASIDE_PAIRS / PROBE_SHARE)
    pair.run(control, 20 * MAX_GAP)
    assert all(a.gap == MAX_GAP for a in pair.asides)
    assert pair.tokens / pair.seconds > 0.9


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
    assert len(pair.asides) == 1 and pair.asides[0].found.high < 1.0


def test_a_probe_that_pays_goes_back_to_drafting() -> None:
    state = {"right": False}
    pair = Pair(0.1, flat(1.0), lambda i, n: (0.9, state["right"]))
    control = DraftingControl(1)
    pair.run(control, FIRST_TRIAL)
    assert control.stepped_aside
    state["right"] = True  # the subject changed: the draft is right now
    pair.run(control, pair.asides[0].gap + 2 * CLEAR_PAIRS + 40)
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
    assert settled(drafted[-15:]) == 5
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
    # Two plain rounds in a row every PLAIN_EVERY (the second on warm caches).
    after = pair.lengths[FIRST_CLEAR:]
    assert pair.lengths.count(0) == START_PLAIN + CLEAR_PAIRS + after.count(0)
    assert after.count(0) == sum(1 for r in range(FIRST_CLEAR + 1, 301) if r % PLAIN_EVERY < 2)


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
            assert control.record(RoundMeasure(0, 0, 1, 1.0)) is None
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
            RoundMeasure(taken, taken, taken + 1, seconds, 0.1 * taken, taken, cloned=cloned)
        )
        assert aside is None, i
    assert not control.stepped_aside and control.asides == 0


def bursts(seed: int) -> Callable[[float], float]:
    """A busy desktop's load, as the bursty-load benchmark makes it: stretches of 75 to
    1,100 plain steps (0.1-1.5 s of a 1.3 ms step) in which every step runs 1, 2 or 3
    times slower, drawn at random; the same for the same seed."""
    rng = random.Random(seed)
    edges, factors, t = [0.0], [], 0.0
    while t < 1e6:
        t += rng.uniform(75, 1100)
        edges.append(t)
        factors.append(rng.choice((1.0, 2.0, 3.0)))

    def load(seconds: float) -> float:
        return factors[bisect.bisect_right(edges, seconds) - 1]

    return load


@pytest.mark.parametrize("cpu", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_pair_that_pays_keeps_drafting_through_bursts(seed: int, cpu: bool) -> None:
    # Two tokens drafted, always right, 0.3 s a draft step against a 1 s verify: 1.9x
    # plain on a quiet computer. Bursts that slow every step 2-3x for hundreds of steps
    # made the old controller compare rounds in a burst with plain steps before it.
    pair = Pair(0.3, flat(1.0), lambda i, n: (0.95, True), load=bursts(seed), cpu=cpu)
    control = DraftingControl(2, paired=not cpu)
    pair.run(control, 4000)
    assert not pair.asides and not control.stepped_aside
    # Where bursts made the watch doubt, a check in pairs cleared it, said in words.
    assert all(k.disturbed for k in pair.kept)
    assert all("this computer was busy" in k.describe() for k in pair.kept)
    assert all(k.found.low >= 1.0 for k in pair.kept)
    # Measured in work (seconds as on a quiet computer), near fixed drafting's 3 / 1.6.
    assert pair.tokens / pair.work > 0.9 * 3 / 1.6


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_pair_that_does_not_pay_stands_aside_at_plain_speed_through_bursts(seed: int) -> None:
    # As costly as its target and never right, under the same bursts.
    pair = Pair(1.0, flat(1.0), lambda i, n: (0.5, False), load=bursts(seed))
    control = DraftingControl(1)
    pair.run(control, 6000)
    assert pair.asides and all(FIRST_GAP <= a.gap <= MAX_GAP for a in pair.asides)
    assert all(a.found.pairs >= ASIDE_PAIRS for a in pair.asides)
    assert pair.tokens / pair.work > 0.95  # plain: one token a quiet second


def test_a_trial_inside_one_burst_does_not_step_aside() -> None:
    # The computer is quiet for the two plain rounds after the prompt, then three times
    # slower for the whole first trial: the old controller saw 1.9 / 3 = 0.63x plain.
    pair = Pair(0.3, flat(1.0), lambda i, n: (0.95, True), load=lambda t: 3.0 if t >= 2 else 1.0)
    control = DraftingControl(2)
    pair.run(control, FIRST_CLEAR + WINDOW + 2 * CLEAR_PAIRS)
    assert not pair.asides and not control.stepped_aside
    assert pair.lengths[-1] == 2


def test_a_long_burst_makes_the_watch_doubt_and_a_check_in_pairs_clears_it() -> None:
    pair = Pair(0.3, flat(1.0), lambda i, n: (0.95, True))
    control = DraftingControl(2)
    pair.run(control, 200)
    pair.load = lambda t: 3.0  # three times slower from now on, for longer than a window
    pair.run(control, WINDOW + 2 * CLEAR_PAIRS + 10)
    assert not pair.asides and len(pair.kept) == 1
    kept = pair.kept[0]
    assert kept.found.low >= 1.0 and kept.found.pairs == CLEAR_PAIRS
    assert kept.describe().startswith("drafting pays: 1.88x plain")
    assert "its steps took 3.0x as long as when quiet" in kept.describe()


def test_a_busy_judgement_says_so_in_words() -> None:
    pair = Pair(1.0, flat(1.0), lambda i, n: (0.5, False))
    control = DraftingControl(1)
    pair.run(control, 80)  # quiet plain steps measured along the way
    pair.load = lambda t: 1.6
    pair.run(control, 2 * MAX_GAP)
    busy = [a for a in pair.asides if a.disturbed]
    assert busy and "its steps took 1.6x as long as when quiet" in busy[-1].describe()
    assert "decoding plain for" in busy[-1].describe()
    assert not pair.asides[0].disturbed


def test_with_cpu_time_a_burst_decides_nothing_and_is_still_said() -> None:
    # Work seconds (a thread's CPU time) do not grow in a burst; the wall's do. The
    # first check runs inside a burst that makes every step 2.5 times slower by the wall.
    pair = Pair(0.3, flat(1.0), lambda i, n: (0.95, True), cpu=True, load=lambda t: 2.5)
    control = DraftingControl(2, paired=False)
    pair.run(control, FIRST_CLEAR)
    assert [k.found.speedup for k in pair.kept] == [pytest.approx(3 / 1.6)]
    assert "its steps took 2.5x as long as when quiet" in pair.kept[0].describe()
    pair.run(control, 3000)
    assert not pair.asides and len(pair.kept) == 1  # the watch never doubted again


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_with_cpu_time_a_pair_that_does_not_pay_stands_aside_through_bursts(seed: int) -> None:
    pair = Pair(1.0, flat(1.0), lambda i, n: (0.5, False), load=bursts(seed), cpu=True)
    control = DraftingControl(1, paired=False)
    pair.run(control, 6000)
    assert all(a.found.speedup == pytest.approx(0.5) for a in pair.asides)
    assert pair.tokens / pair.work > 0.96
