"""Adaptive drafting: each round's draft length, and stepping aside when drafting does not pay.

A round's reward is the tokens it emits, its cost the seconds it takes; the controller
maximises tokens per second by the rule of marginal value (the optimal stop for a
renewal-reward rate): draft on while what the next tokens are expected to add is worth
at least what they cost at the best rate measured so far, R* (the better of
speculation's recent rate and plain decoding's). A token is expected to add the chance
that it and every token before it in the round are accepted: for a drafted token the
acceptance measured for drafts of its confidence (the draft's top-1 probability, in
BANDS bands), for one not yet drafted that measured at its position in the round once
reached (errors come in runs: a draft right so far is likelier right next), multiplied
along the round. It costs a draft step and what it adds to the verify: each verify
length's own measured seconds (a line fitted through them for lengths not measured),
since a verify's cost need not grow evenly (on the bench pair 7 positions cost 1.6x what
5 do, 5 hardly more than 4); a length rounds never reach is drafted now and then to
measure it (EXPLORE_EVERY). The controller looks ahead to every longer round up to the
cap, so a dear next position does not stop a round whose next two pay. So a draft that
is sure and right drafts to where the verify gets dear, one that hesitates stops early,
and one whose confidence means nothing (random weights) learns what its acceptance
really is.

Stepping aside: over the latest speculative rounds, the speedup over plain decoding
(speculation's tokens per second times the plain step time) has a 95 % interval (the
ratio estimator's, by the delta method). When its upper end is below 1 the controller
goes plain for `gap` tokens, then probes with JUDGE_ROUNDS speculative rounds; each
probe that confirms doubles the gap, up to MAX_GAP. A probe is not free (the draft reads
what it missed, then drafts rounds that lose): the gap is at least long enough that what
the last trial lost is PROBE_SHARE of the time spent plain. A plain round every
PLAIN_EVERY rounds keeps the plain step time current while drafting pays (every
PLAIN_EVERY_SURE once it surely pays). Rounds are timed whole, with the decoding loop's
own work (on a tiny model as costly as a forward), so plain and speculative rounds are
compared as a reply sees them. MNN clones a module on the first forward of each shape:
each first time is left out.

Only past rounds and the draft's own outputs decide a round's length, never the verify
it is about to get, so speculative sampling stays exact. The controller lives as long
as the loaded pair: the next reply starts from what this one learned. Its first rounds
draft the pack authors' recommended length (runtime_config.json) where they give one.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

BANDS = 10
PRIOR = 2.0  # pseudo-observations per band, at the band's middle confidence
DECAY = 0.98  # per round: a change of subject (prose to code) shows within tens of rounds
PLAIN_EVERY = 64  # a plain round among this many keeps the plain time current…
# …and among this many once drafting surely pays (the speedup's interval above SURE):
# the plain time then decides nothing, and each plain round costs what drafting gains.
PLAIN_EVERY_SURE, SURE = 1024, 1.3
JUDGE_ROUNDS = 6  # speculative rounds before the speedup is judged
WINDOW = 24  # the latest speculative rounds the speedup is judged over
FIRST_GAP, MAX_GAP = 32, 2048
PROBE_SHARE = 0.03  # a probe loses at most this share of the plain time before it
Z95 = 1.96
EWMA = 0.2  # weight of the newest draft step time
TIMES_KEPT = 9  # the latest times per kind of step
# A verify length's cost: the lower quartile of its latest times. Another process only
# ever slows a step, and a length rounds seldom choose keeps its times long: one slowed
# time should not keep rounds from it (it did, on the fast pair: 0.78 of fixed drafting).
VERIFY_QUANTILE = 0.25
# A verify length rounds do not choose is measured by a round every EXPLORE_EVERY that
# drafts it, until it has been measured enough, and again when STALE_ROUNDS old: its
# cost may be what keeps rounds from it.
EXPLORE_EVERY, STALE_ROUNDS = 16, 256


class _Times:
    """The latest TIMES_KEPT times of one kind of step and their `quantile` (the median
    by default), worked out only when read (a plain step of a tiny model is 0.1 ms:
    bookkeeping must stay cheap). The first time is left out: MNN clones a module on a
    shape's first forward."""

    def __init__(self, quantile: float = 0.5) -> None:
        self.times: deque[float] = deque(maxlen=TIMES_KEPT)
        self.seen = False
        self.quantile = quantile
        self._typical: float | None = None

    def add(self, seconds: float) -> None:
        if self.seen:
            self.times.append(seconds)
            self._typical = None
        self.seen = True

    def typical(self) -> float | None:
        if self._typical is None and self.times:
            ordered = sorted(self.times)
            self._typical = ordered[int(self.quantile * (len(ordered) - 1))]
        return self._typical


@dataclass(frozen=True)
class Aside:
    """Why the controller stepped aside: the speedup it measured and its 95 % interval."""

    speedup: float
    low: float
    high: float
    rounds: int
    gap: int  # plain tokens before the next probe

    def describe(self) -> str:
        return (
            f"drafting did not pay: {self.speedup:.2f}x plain ({self.low:.2f}-{self.high:.2f}, "
            f"95 %, {self.rounds} rounds); decoding plain for {self.gap} tokens, then "
            "drafting is tried again"
        )


class DraftingControl:
    """One loaded pair's controller. Per round: `plan`, then `take` and `more` for each
    drafted token, then `record` with what the round measured."""

    def __init__(self, max_length: int, stop_below: float = 0.0, start_length: int = 0) -> None:
        """`start_length`: what the first JUDGE_ROUNDS speculative rounds draft, before
        anything is measured (the pack authors' recommended length, say); 0: the cap."""
        if max_length < 1:
            raise ValueError("adaptive drafting needs a draft length of at least 1")
        self.max_length = max_length
        self.start_length = start_length if 0 < start_length < max_length else max_length
        self.stop_below = stop_below
        self.aside: Aside | None = None  # the latest time it stepped aside
        self.asides = 0
        self._checked = [0.0] * BANDS
        self._accepted = [0.0] * BANDS
        # The same by position in the round: a draft right so far is likelier right next
        # (its errors come in runs), which the overall rate would underrate.
        self._at_checked = [0.0] * max_length
        self._at_accepted = [0.0] * max_length
        self._draft_step: float | None = None
        # Verify length (proposals + 1) -> its latest seconds. MNN's first forward of a
        # shape clones its module (tens of times a step, measured): the first time of
        # each length, and the first draft step, are not counted.
        self._verify: dict[int, _Times] = {}
        self._draft_seen = False
        self._drafted_rounds = 0
        self._plain = _Times()  # whole plain rounds
        self._recent: deque[tuple[int, float]] = deque(maxlen=WINDOW)
        self._rounds = 0
        self._aside_left = 0
        self._gap = FIRST_GAP
        self._probing = False
        # Since drafting last (re)started: seconds and tokens, what the trial cost.
        self._trial_seconds, self._trial_tokens = 0.0, 0
        self._chance = 1.0  # within a round: that every token taken so far is accepted
        self._bands: list[int] = []  # the round's proposals' bands
        # Fixed for a round (plan): what a drafted token is weighed against. Computed
        # once a round so a drafted token costs a few multiplications.
        self._rate = 0.0
        self._costs = [0.0] * (max_length + 1)  # verify seconds by proposals in it
        self._ahead = [0.0] * max_length  # acceptance by position, once reached
        self._forced = 0  # proposals this round drafts whatever they weigh (0: it weighs)
        self._sure = False  # drafting surely pays (the latest judgement)
        self._measured_at: dict[int, int] = {}  # verify length -> the round it last ran

    # -- a round ---------------------------------------------------------------------------

    @property
    def stepped_aside(self) -> bool:
        return self._aside_left > 0

    @property
    def probing(self) -> bool:
        """Trying drafting again after standing aside, not yet judged."""
        return self._probing

    def plan(self) -> int:
        """The most tokens this round may draft; 0: a plain step."""
        self._chance, self._bands = 1.0, []
        if self._aside_left > 0:
            return 0
        self._rounds += 1
        every = PLAIN_EVERY_SURE if self._sure else PLAIN_EVERY
        if self._rounds <= 2 or self._rounds % every == 0:
            # The plain step's time, now and then (twice at first: a first step after
            # the prompt is MNN's clone, not counted).
            return 0
        # Before anything is measured, rounds draft `start_length` whatever it weighs;
        # now and then one drafts a length whose verify cost is not known (or is old).
        self._forced = 0
        if self._draft_step is None or self._drafted_rounds < JUDGE_ROUNDS:
            self._forced = self.start_length
        elif self._rounds % EXPLORE_EVERY == 0:
            self._forced = self._unknown_length()
        self._rate = self._best_rate()
        self._costs = self._verify_by_proposals()
        self._ahead = self._position_rates()
        return self.max_length

    def take(self, position: int, confidence: float) -> bool:
        """Whether the token drafted at `position` (0-based) goes to the verify."""
        if confidence < self.stop_below:
            return False
        band = min(int(confidence * BANDS), BANDS - 1)
        chance = self._chance * self._band_rate(band)
        if position > 0 and not self._forced and not self._pays(position, chance, 0.0):
            return False
        self._chance = chance
        self._bands.append(band)
        return True

    def more(self, position: int) -> bool:
        """Whether to draft the token after `position`, which was taken."""
        if position + 1 >= self.max_length:
            return False
        if self._forced or self._draft_step is None:
            return position + 1 < (self._forced or self.start_length)
        taken = position + 1
        return self._pays(taken, self._chance * self._ahead[taken], self._draft_step)

    def _pays(self, taken: int, chance: float, draft_step: float) -> bool:
        """Whether a round with `taken` proposals pays to grow to some longer one up to
        the cap: the first added proposal accepted (with all before) with `chance`, each
        next with its position's rate more; each costs `draft_step` (0: already drafted,
        then the next ones the measured step) and what it adds to the verify."""
        costs, rate = self._costs, self._rate
        gain, drafting, base = 0.0, draft_step, costs[taken]
        for more in range(taken + 1, self.max_length + 1):
            gain += chance
            if gain >= rate * (costs[more] - base + drafting):
                return True
            if more < self.max_length:
                chance *= self._ahead[more]
            drafting += self._draft_step or 0.0
        return False

    def record(
        self,
        drafted: int,
        accepted: int,
        emitted: int,
        draft_seconds: float,
        draft_forwards: int,
        target_seconds: float,
        round_seconds: float | None = None,
        later_seconds: float | None = None,
        cloned: bool = False,
    ) -> Aside | None:
        """What the round measured; an `Aside` when it made the controller step aside.
        `round_seconds`: the whole round as the reply sees it (the decoding loop's own
        work included, which on a tiny model costs as much as a forward); default the
        draft's and the target's time. `later_seconds`: the draft forwards after the
        round's first (which feeds what the draft has not seen, dearer), what one more
        drafted token costs; default the draft's time over its forwards. `cloned`: a
        model fed a length it never had (MNN cloned a module: not judged)."""
        cycle = draft_seconds + target_seconds if round_seconds is None else round_seconds
        times = self._verify.get(drafted + 1)
        if times is None:
            times = self._verify[drafted + 1] = _Times(VERIFY_QUANTILE)
        # MNN clones a module on a shape's first forward (tens of steps' time): such a
        # round is no sample of what drafting costs.
        cloned = cloned or not times.seen or (draft_forwards > 0 and not self._draft_seen)
        times.add(target_seconds)
        self._measured_at[drafted + 1] = self._rounds
        if drafted == 0 and draft_forwards == 0:
            self._plain.add(cycle)
            if self._aside_left > 0:
                self._aside_left = max(self._aside_left - emitted, 0)
                if self._aside_left == 0:
                    self._probing = True
                    self._recent.clear()
                    self._trial_seconds, self._trial_tokens = 0.0, 0
                return None
        self._trial_seconds += cycle
        self._trial_tokens += emitted
        if drafted == 0 and draft_forwards == 0:
            return None
        self._drafted_rounds += 1
        if later_seconds is None:
            step = draft_seconds / draft_forwards if draft_forwards else None
        else:
            step = later_seconds / (draft_forwards - 1) if draft_forwards > 1 else None
        if step is not None and self._draft_seen:
            self._draft_step = _ewma(self._draft_step, step)
        self._draft_seen = self._draft_seen or draft_forwards > 0
        for i in range(len(self._checked)):
            self._checked[i] *= DECAY
            self._accepted[i] *= DECAY
        for i in range(len(self._at_checked)):
            self._at_checked[i] *= DECAY
            self._at_accepted[i] *= DECAY
        for i, band in enumerate(self._bands[: accepted + 1]):
            right = 1.0 if i < accepted else 0.0
            self._checked[band] += 1.0
            self._accepted[band] += right
            self._at_checked[i] += 1.0
            self._at_accepted[i] += right
        if cloned:
            return None
        self._recent.append((emitted, cycle))
        return self._judge()

    def read(self, seconds: float) -> None:
        """The draft read what it had not seen (a reply's prompt, or what was decoded
        plain): a cost of trying drafting, weighed when sizing the next gap, but not of
        a round, so it does not decide whether drafting pays."""
        self._trial_seconds += seconds

    # -- figures ---------------------------------------------------------------------------

    def speedup(self) -> tuple[float, float, float] | None:
        """The recent speedup over plain and its 95 % interval, once it can be judged."""
        plain = self._plain_step()
        n = len(self._recent)
        if plain is None or n < JUDGE_ROUNDS:
            return None
        tokens = sum(e for e, _ in self._recent)
        seconds = sum(s for _, s in self._recent)
        if seconds <= 0:
            return None
        rate = tokens / seconds
        spread = sum((e - rate * s) ** 2 for e, s in self._recent) / (n - 1)
        error = math.sqrt(spread / n) / (seconds / n)
        return rate * plain, (rate - Z95 * error) * plain, (rate + Z95 * error) * plain

    def _judge(self) -> Aside | None:
        found = self.speedup()
        if found is None:
            return None
        speedup, low, high = found
        self._sure = low > SURE
        if high >= 1.0:
            if self._probing:
                self._probing, self._gap = False, FIRST_GAP
                self._trial_seconds, self._trial_tokens = 0.0, 0
            return None
        gap = min(max(self._gap, self._gap_for_trial()), MAX_GAP)
        self.aside = Aside(speedup, max(low, 0.0), high, len(self._recent), gap)
        self.asides += 1
        self._aside_left, self._gap = gap, min(2 * gap, MAX_GAP)
        self._probing = False
        self._recent.clear()
        return self.aside

    def _gap_for_trial(self) -> int:
        """Plain tokens for which the trial just judged loses PROBE_SHARE of their time."""
        plain = self._plain_step()
        if not plain:
            return 0
        lost = self._trial_seconds - self._trial_tokens * plain
        return max(math.ceil(lost / plain / PROBE_SHARE), 0)

    def _band_rate(self, band: int) -> float:
        middle = (band + 0.5) / BANDS
        return (self._accepted[band] + PRIOR * middle) / (self._checked[band] + PRIOR)

    def _position_rates(self) -> list[float]:
        """Acceptance by position once reached, drawn to the overall rate where little
        is measured (PRIOR observations of it)."""
        checked, accepted = sum(self._checked), sum(self._accepted)
        overall = (accepted + PRIOR * 0.5) / (checked + PRIOR)
        return [
            (right + PRIOR * overall) / (seen + PRIOR)
            for right, seen in zip(self._at_accepted, self._at_checked, strict=True)
        ]

    def _best_rate(self) -> float:
        """R*: tokens per second of recent speculation or of plain steps, the better."""
        best = 0.0
        plain = self._plain_step()
        if plain:
            best = 1.0 / plain
        seconds = sum(s for _, s in self._recent)
        if seconds > 0:
            best = max(best, sum(e for e, _ in self._recent) / seconds)
        return best

    def _plain_step(self) -> float | None:
        """A plain round's seconds: measured, else the cheapest verify measured (a
        verify alone: the speedup may then be underrated a little), else None."""
        return self._plain.typical() or min(self._verify_costs().values(), default=None)

    def _verify_costs(self) -> dict[int, float]:
        """Verify length -> its typical seconds, for the lengths measured twice (once
        more may still be warming up); plain steps (length 1) from their first."""
        return {
            length: cost
            for length, times in self._verify.items()
            if (length == 1 or len(times.times) >= 2) and (cost := times.typical()) is not None
        }

    def _unknown_length(self) -> int:
        """The fewest proposals whose verify was not measured enough to be weighed, or
        not for STALE_ROUNDS rounds; 0: all are known (the round weighs as usual)."""
        for proposals in range(1, self.max_length + 1):
            times = self._verify.get(proposals + 1)
            if times is None or len(times.times) < 2:
                return proposals
            if self._rounds - self._measured_at[proposals + 1] > STALE_ROUNDS:
                return proposals
        return 0

    def _verify_by_proposals(self) -> list[float]:
        """A verify's seconds with 0..cap proposals (length 1..cap+1): each length's own
        typical time where measured, else a least-squares line through those measured (flat
        until two are: a memory-bound verify costs one step at any length); never less
        than a shorter one's (noise)."""
        measured = self._verify_costs()
        xs, ys = list(measured), list(measured.values())
        slope, mx, my = 0.0, (sum(xs) / len(xs) if xs else 0.0), (sum(ys) / len(ys) if ys else 0.0)
        if len(measured) >= 2:
            sxx = sum((x - mx) ** 2 for x in xs)
            sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
            slope = max(sxy / sxx, 0.0)
        costs, floor = [], 0.0
        for length in range(1, self.max_length + 2):
            cost = measured.get(length, my + slope * (length - mx))
            floor = max(floor, cost)
            costs.append(floor)
        return costs


def _ewma(old: float | None, new: float) -> float:
    return new if old is None else old + EWMA * (new - old)
