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

Stepping aside is judged on what another program's load does not change
(drafting_check.py). Where a round's work is timed by this thread's CPU time (not on
Windows), a burst adds nothing to it: speculative rounds are judged as they run against
plain steps timed in stretches of plain ones, on warm caches. Where it is timed by the
wall, a plain round and a speculative one alternate, and each speculative round is
compared with the plain round run just before it: a burst slows both. Such a check runs
when the pair is loaded, when a probe tries drafting again, and when the latest WINDOW
speculative rounds, measured against the plain step time, say drafting no longer pays
(that watch only asks for a check: its rounds and its plain steps ran at different
moments). A check stands aside only on ASIDE_PAIRS rounds whose interval lies below 1;
it then goes plain for `gap` tokens and probes with a new check; each probe that
confirms doubles the gap, up to MAX_GAP, so a chat reaches its next trial. A probe is
not free (the draft reads what it missed, then drafts rounds that lose): the gap is at
least long enough that what the last check lost, in plain steps, is PROBE_SHARE of the
plain steps after it. Two plain rounds every PLAIN_EVERY keep the plain step time
current while drafting pays (every PLAIN_EVERY_SURE once it surely pays). Rounds are
timed whole, with the decoding loop's own work (on a tiny model as costly as a forward),
so plain and speculative rounds are compared as a reply sees them. A step's cost is a
low quantile of its latest times: another process only ever slows a step. MNN clones a
module on the first forward of each shape: each first time is left out.

Only past rounds and the draft's own outputs decide a round's length, never the verify
it is about to get, so speculative sampling stays exact. The controller lives as long
as the loaded pair: the next reply starts from what this one learned. Its first rounds
draft the pack authors' recommended length (runtime_config.json) where they give one.
"""

from __future__ import annotations

import math
from collections import deque

from app.core.measure.drafting_check import Judgement, PairedCheck
from app.core.measure.step_times import LOW_QUANTILE, RoundMeasure, StepTimes, costs_by_length

BANDS = 10
PRIOR = 2.0  # pseudo-observations per band, at the band's middle confidence
DECAY = 0.98  # per round: a change of subject (prose to code) shows within tens of rounds
PLAIN_EVERY = 64  # a plain round among this many keeps the plain time current…
# …and among this many once drafting surely pays (the speedup's interval above SURE):
# the plain time then decides nothing, and each plain round costs what drafting gains.
PLAIN_EVERY_SURE, SURE = 1024, 1.3
JUDGE_ROUNDS = 6  # the first speculative rounds, which draft the recommended length
WINDOW = 24  # the latest speculative rounds the watch weighs
# Plain rounds a pair starts with: the first is MNN's clone, the others measure the plain
# step that speculative rounds are judged against where they are not paired.
START_PLAIN = 5
QUIET_KEPT = 64  # the latest plain rounds this computer's quiet plain step is read from
# Plain tokens a stand-aside lasts at first and at most: an aside must end within a
# chat's reply or two, so a judgement made in a burst is tried again soon.
FIRST_GAP, MAX_GAP = 32, 1024
PROBE_SHARE = 0.03  # a probe loses at most this share of the plain time before it
Z95 = 1.96
# A verify length rounds do not choose is measured by a round every EXPLORE_EVERY that
# drafts it, until it has been measured enough, and again when STALE_ROUNDS old: its
# cost may be what keeps rounds from it.
EXPLORE_EVERY, STALE_ROUNDS = 16, 256


class DraftingControl:
    """One loaded pair's controller. Per round: `plan`, then `take` and `more` for each
    drafted token, then `record` with what the round measured."""

    def __init__(
        self, max_length: int, stop_below: float = 0.0, start_length: int = 0, paired: bool = True
    ) -> None:
        """`start_length`: what the first JUDGE_ROUNDS speculative rounds draft, before
        anything is measured (the pack authors' recommended length, say); 0: the cap.
        `paired`: judge in pairs of rounds (seconds by the wall: a burst slows both);
        False where seconds are CPU time (a burst adds none): speculative rounds are
        judged as they run, against plain steps measured in stretches of plain ones."""
        if max_length < 1:
            raise ValueError("adaptive drafting needs a draft length of at least 1")
        self.max_length = max_length
        self.start_length = start_length if 0 < start_length < max_length else max_length
        self.stop_below = stop_below
        self.aside: Judgement | None = None  # the latest time it stepped aside
        self.asides = 0
        self._checked = [0.0] * BANDS
        self._accepted = [0.0] * BANDS
        # The same by position in the round: a draft right so far is likelier right next
        # (its errors come in runs), which the overall rate would underrate.
        self._at_checked = [0.0] * max_length
        self._at_accepted = [0.0] * max_length
        self._draft_step: float | None = None  # fixed for a round (plan)
        self._draft_times = StepTimes(LOW_QUANTILE)  # a draft forward after a round's first
        # Verify length (proposals + 1) -> its latest seconds. MNN's first forward of a
        # shape clones its module (tens of times a step, measured): the first time of
        # each length, and the first draft step, are not counted.
        self._verify: dict[int, StepTimes] = {}
        self._draft_seen = False
        self._drafted_rounds = 0
        self._plain = StepTimes()  # whole plain rounds
        self._quiet = StepTimes(LOW_QUANTILE, QUIET_KEPT)  # …as on a quiet computer
        self._recent: deque[tuple[int, float]] = deque(maxlen=WINDOW)
        self._rounds = 0
        self._aside_left = 0
        self._gap = FIRST_GAP
        # A judgement in pairs of rounds under way (one from the start), and whether it
        # is a probe after standing aside; seconds the draft read since it began.
        self.paired = paired
        self._check: PairedCheck | None = PairedCheck(paired)
        self._probing = False
        self._last_plain = False  # the round before was plain (its caches are warm)
        self._trial = True  # the check under way follows a load, a probe or the watch's doubt
        self._read_seconds = 0.0
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
        if self._check is not None and self._check.wants_plain:
            return 0  # a check's plain half
        if self._rounds <= START_PLAIN or (
            (self._check is None or not self.paired) and self._rounds % every < 2
        ):
            # The plain step's time, now and then: two steps in a row, the second on warm
            # caches (START_PLAIN at first: a first step after the prompt is MNN's clone).
            return 0
        # Before anything is measured, rounds draft `start_length` whatever it weighs;
        # now and then one drafts a length whose verify cost is not known (or is old).
        self._forced = 0
        self._draft_step = self._draft_times.typical()
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

    def record(self, m: RoundMeasure) -> Judgement | None:
        """What the round measured; a `Judgement` when a check decided (an aside, or
        that drafting goes on, said only when the computer was busy)."""
        warm, self._last_plain = self._last_plain, m.plain
        if m.plain and self._aside_left > 0:  # standing aside: a step counted, no more
            if warm and not self.paired:  # CPU time: standing aside keeps it current
                self._plain.add(m.seconds)
            self._aside_left = max(self._aside_left - m.emitted, 0)
            if self._aside_left == 0:  # the probe: a check
                self._start_check(probing=True)
            return None
        drafted, cycle = m.drafted, m.seconds
        times = self._verify.get(drafted + 1)
        if times is None:
            times = self._verify[drafted + 1] = StepTimes(LOW_QUANTILE)
        # MNN clones a module on a shape's first forward (tens of steps' time): such a
        # round is no sample of what drafting costs.
        cloned = m.cloned or not times.seen or (m.draft_forwards > 0 and not self._draft_seen)
        times.add(m.target_seconds)
        self._measured_at[drafted + 1] = self._rounds
        if m.plain:
            # Paired, by the wall: from a check's and the watch's plain rounds only
            # (hundreds of plain steps standing aside in one burst would make it the
            # burst's); not paired: from plain rounds on warm caches.
            if self.paired or warm:
                self._plain.add(cycle)
                self._quiet.add(cycle)
            if self._check is not None:
                self._check.plain(cycle, m.wall)
            return None
        self._drafted_rounds += 1
        forwards, later = m.draft_forwards, m.later_seconds
        if self._draft_seen and forwards > (0 if later is None else 1):
            if later is None:
                self._draft_times.add(m.draft_seconds / forwards)
            else:
                self._draft_times.add(later / (forwards - 1))
        self._draft_seen = self._draft_seen or forwards > 0
        for i in range(len(self._checked)):
            self._checked[i] *= DECAY
            self._accepted[i] *= DECAY
        for i in range(len(self._at_checked)):
            self._at_checked[i] *= DECAY
            self._at_accepted[i] *= DECAY
        for i, band in enumerate(self._bands[: m.accepted + 1]):
            right = 1.0 if i < m.accepted else 0.0
            self._checked[band] += 1.0
            self._accepted[band] += right
            self._at_checked[i] += 1.0
            self._at_accepted[i] += right
        if self._check is not None:
            if cloned:
                self._check.skip(m.emitted, cycle)
                return None
            self._check.speculative(m.emitted, cycle, m.wall, self._plain_step())
            return self._checked_now()
        if not cloned:
            self._watch(m.emitted, cycle)
        return None

    def read(self, seconds: float) -> None:
        """The draft read what it had not seen (a reply's prompt, or what was decoded
        plain): a cost of trying drafting, weighed when sizing the next gap, but not of
        a round, so it does not decide whether drafting pays."""
        self._read_seconds += seconds

    # -- figures ---------------------------------------------------------------------------

    def speedup(self) -> tuple[float, float, float] | None:
        """The watch: the latest speculative rounds' speedup over the plain step time
        and its 95 % interval (the ratio estimator's, by the delta method), once WINDOW
        rounds are in. Its rounds and its plain steps ran at different moments: it only
        asks for a check."""
        plain = self._plain_step()
        n = len(self._recent)
        if plain is None or n < WINDOW:
            return None
        tokens = sum(e for e, _ in self._recent)
        seconds = sum(s for _, s in self._recent)
        if seconds <= 0:
            return None
        rate = tokens / seconds
        spread = sum((e - rate * s) ** 2 for e, s in self._recent) / (n - 1)
        error = math.sqrt(spread / n) / (seconds / n)
        return rate * plain, (rate - Z95 * error) * plain, (rate + Z95 * error) * plain

    def _watch(self, emitted: int, cycle: float) -> None:
        self._recent.append((emitted, cycle))
        found = self.speedup()
        if found is None:
            return
        self._sure = found[1] > SURE
        if found[2] < 1.0:
            self._start_check(probing=False)

    def _start_check(self, probing: bool) -> None:
        self._check, self._probing, self._trial = PairedCheck(self.paired), probing, True
        self._read_seconds = 0.0
        self._recent.clear()

    def _checked_now(self) -> Judgement | None:
        """The check's judgement once it has decided: an aside, or (said only when the
        computer was busy) that drafting goes on."""
        check = self._check
        assert check is not None
        verdict = check.verdict()
        if verdict is None:
            return None
        found, pays = verdict
        busy = check.busy(self._quiet.typical())
        self._check = None if self.paired else PairedCheck(paired=False)  # unpaired: always
        self._recent.clear()
        if pays:
            self._sure = found.low > SURE
            if self._probing:
                self._probing, self._gap = False, FIRST_GAP
            # Said when the computer was busy, once a trial (not paired, checks run on).
            kept, trial, self._trial = Judgement(found, 0, busy), self._trial, False
            return kept if kept.disturbed and trial else None
        # Plain tokens for which what the check lost is PROBE_SHARE of their time.
        plain = self._quiet.typical() or self._plain_step()
        lost = check.lost() + (self._read_seconds / plain if plain else 0.0)
        gap = min(max(self._gap, math.ceil(max(lost, 0.0) / PROBE_SHARE)), MAX_GAP)
        self.aside = Judgement(found, gap, busy)
        self.asides += 1
        self._aside_left, self._gap = gap, min(2 * gap, MAX_GAP)
        self._probing = False
        return self.aside

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
        """A verify's seconds with 0..cap proposals (length 1..cap+1)."""
        return costs_by_length(self._verify_costs(), self.max_length + 1)
