"""How long a sweep has left, from its plan and the pace measured so far, as shown.

Pairs done over pairs planned is a poor clock: a setting runs rounds until its uplift's
interval is narrow or its time budget (`SweepPlan.budget_seconds`) is spent, so the
planned pair count grows while the sweep runs, every setting also loads and warms up,
and the leading settings are measured again at the end. So the estimate counts stages
(one a setting, then one a re-measured leader), each as long as the finished ones took,
or, before any finished, as the plan makes it at the measured pace: its setup (load,
verify agreement, warm-up), then rounds until the budget is spent (the interval may
narrow sooner; then the estimate falls).

The pace is known early: a stage's warm-up times a generation of each mode, which with
the generations a run repeats gives a pair's seconds before any pair (`SweepClock.
ready`), and a stage's first pair is timed from the end of its setup. A sweep once said
"0 %… estimating…" for 100 s: it waited for two pairs of a stage, the first timed with
the load in it.

What is shown (`ShownEstimate`) moves forward: the share done never goes back, and the
estimate of the whole sweep falls quickly towards a lower figure but starts to rise
only when a new one exceeds it by more than a tenth, then catches up with it, never by
more than a tenth of itself in ten seconds (capped by report, three rises in four
seconds of a busy sweep added 43 %) (the time left once read
"about 5 s", then "20 s", then three more minutes; a rise at every report of a slowly
growing estimate read as a clock running backwards on a busy machine).
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass, replace

from app.core.measure.tune_plan import SweepPlan

# The fewest leaders expected to be re-measured before the first pass says how many: a
# sweep re-measures whenever two or more lead, which a noisy machine makes common;
# assuming they will be lets the estimate fall when they are not, rather than jump up
# at the end (expected_leaders foresees more from the settings finished).
ASSUMED_LEADERS = 2


@dataclass(frozen=True)
class SweepClock:
    """What a sweep has timed, in seconds from its start."""

    settings: int  # settings of the first pass
    stage_starts: tuple[float, ...] = ()  # each begun stage: first pass, then re-measures
    pair_ends: tuple[tuple[int, float], ...] = ()  # (stage index, time) of each pair done
    remeasures: int | None = None  # leaders re-measured; None while the first pass runs
    leaders: int = 0  # leading settings among the results so far
    # (stage index, time its setup ended, a pair's seconds its warm-up foretold or None)
    setups: tuple[tuple[int, float, float | None], ...] = ()

    def started(self, at: float, remeasures: int | None = None) -> SweepClock:
        """This clock with a stage begun `at`; `remeasures` once they are known."""
        known = self.remeasures if remeasures is None else remeasures
        return replace(self, stage_starts=(*self.stage_starts, at), remeasures=known)

    def ready(self, at: float, pair_guess: float | None = None) -> SweepClock:
        """This clock with the current stage's setup done `at`; `pair_guess`: a pair's
        seconds as its warm-up foretells them (None: it says nothing)."""
        stage = len(self.stage_starts) - 1
        return replace(self, setups=(*self.setups, (stage, at, pair_guess)))

    def paired(self, at: float, leaders: int | None = None) -> SweepClock:
        """This clock with a pair of the current stage done `at`."""
        stage = len(self.stage_starts) - 1
        return replace(
            self,
            pair_ends=(*self.pair_ends, (stage, at)),
            leaders=self.leaders if leaders is None else leaders,
        )

    def setup_end(self, stage: int) -> float | None:
        return next((at for index, at, _ in self.setups if index == stage), None)


@dataclass(frozen=True)
class SweepProgress:
    """What a sweep reports as it goes: pairs done, the pairs expected in all
    (`expected_pairs`: more than done until the sweep has ended), the time left, and
    the share done as shown (`share`: time-based, never going back; None: by pairs)."""

    done: int
    total: int
    seconds_left: float | None  # None: not known yet
    share: float | None = None

    @property
    def fraction(self) -> float:
        """The share done: below 1 while any pair may remain."""
        if self.share is not None:
            return self.share
        return self.done / self.total if self.total else 0.0


def pair_seconds(clock: SweepClock) -> float | None:
    """The median time of a pair: the gaps between pairs of one stage, a stage's first
    pair timed from the end of its setup (without it, the first pair's time holds the
    load and warm-up: an estimate from it once said 400 s of a 150 s sweep); before any
    pair, what the latest warm-up foretold; None while nothing is timed."""
    gaps = [
        b - a
        for (stage_a, a), (stage_b, b) in itertools.pairwise(clock.pair_ends)
        if stage_a == stage_b
    ]
    firsts: dict[int, float] = {}
    for stage, at in clock.pair_ends:
        firsts.setdefault(stage, at)
    for stage, at in firsts.items():
        ready = clock.setup_end(stage)
        if ready is not None:
            gaps.append(at - ready)
    if gaps:
        return statistics.median(gaps)
    guesses = [guess for _, _, guess in clock.setups if guess is not None and guess > 0]
    return guesses[-1] if guesses else None


def setup_seconds(clock: SweepClock) -> float | None:
    """The median setup of the stages timed so far (None: none is)."""
    setups = [at - clock.stage_starts[stage] for stage, at, _ in clock.setups]
    return statistics.median(setups) if setups else None


def planned_rounds(plan: SweepPlan, pair: float) -> int:
    """The rounds (a pair per prompt) a stage runs at `pair` seconds a pair when its
    interval never narrows: until the budget is spent, at least `min_rounds`, at most
    `max_repeats` (the runner's rule; the interval reaching its width sooner ends it
    sooner)."""
    round_seconds = max(len(plan.prompts), 1) * pair
    rounds = math.ceil(plan.budget_seconds / round_seconds) if round_seconds > 0 else 1
    return min(max(rounds, plan.min_rounds), max(plan.max_repeats, plan.min_rounds))


def planned_stage_seconds(plan: SweepPlan, pair: float, setup: float) -> float:
    """A stage as the plan makes it at `pair` seconds a pair: its setup, then its
    planned rounds."""
    return setup + planned_rounds(plan, pair) * max(len(plan.prompts), 1) * pair


def expected_leaders(clock: SweepClock) -> int:
    """The leaders the first pass will end with: halfway between those leading now and
    as many of all its settings as lead among those finished (a quiet fast pair's five
    Quick settings all tie, and counting only those leading so far grew the estimate at
    every setting, 130 s into a 250 s sweep still; a later setting often outruns the
    earlier ones, so the share alone foresees too many), at least ASSUMED_LEADERS; none
    for a sweep of one setting."""
    if clock.settings < 2:
        return 0
    finished = len(clock.stage_starts) - 1
    share = clock.leaders * clock.settings / finished if finished > 0 else clock.leaders
    foreseen = math.ceil((clock.leaders + share) / 2)
    return min(max(foreseen, ASSUMED_LEADERS), clock.settings)


def _stages_after(clock: SweepClock) -> int:
    """The stages not begun yet: the settings left, then the leaders re-measured (before
    the first pass says how many, as expected_leaders foresees them)."""
    if clock.remeasures is None:
        after = clock.settings - len(clock.stage_starts) + expected_leaders(clock)
    else:
        after = clock.settings + clock.remeasures - len(clock.stage_starts)
    return max(after, 0)


def expected_pairs(plan: SweepPlan, clock: SweepClock) -> int:
    """The pairs the whole sweep runs, as the run rule makes it at the pace measured so
    far: each finished stage's own count; every stage to come as many as the finished
    ones ran (their median), or before any finished, the rounds the budget buys at the
    measured pace (the plan's least until a pace is known); the stage under way at
    least to the end of its round. While the sweep runs, at least one more than done:
    only the runner knows that the last pair was the last."""
    per_round = max(len(plan.prompts), 1)
    counts = [
        sum(1 for index, _ in clock.pair_ends if index == stage)
        for stage in range(len(clock.stage_starts))
    ]
    finished, current = counts[:-1], (counts[-1] if counts else 0)
    if finished:
        stage = statistics.median(finished)
    else:
        pair = pair_seconds(clock)
        rounds = plan.min_rounds if pair is None else planned_rounds(plan, pair)
        stage = rounds * per_round
    this_stage = max(stage, current + (-current) % per_round) if counts else 0
    total = sum(finished) + this_stage + _stages_after(clock) * stage
    return max(math.ceil(total), len(clock.pair_ends) + 1)


def seconds_left(plan: SweepPlan, clock: SweepClock, now: float) -> float | None:
    """The seconds the sweep has left at `now` (None until a pair's time is known)."""
    pair = pair_seconds(clock)
    if pair is None or not clock.stage_starts:
        return None
    starts = clock.stage_starts
    finished = [b - a for a, b in itertools.pairwise(starts)]
    if finished:
        stage = statistics.median(finished)
    else:
        setup = setup_seconds(clock)
        if setup is None:  # a clock without setups: the first pair's time holds it
            first_end = next(end for index, end in clock.pair_ends if index == 0)
            setup = max(0.0, first_end - starts[0] - pair)
        stage = planned_stage_seconds(plan, pair, setup)
    current = len(starts) - 1
    done_here = sum(1 for index, _ in clock.pair_ends if index == current)
    # A stage past its expected length still ends its round.
    round_left = (-done_here) % max(len(plan.prompts), 1) * pair
    this_stage = max(stage - (now - starts[-1]), round_left)
    return this_stage + _stages_after(clock) * stage


# How the shown estimate of the whole sweep follows a new one: down, half the way at
# once; up, only once it is a tenth more than itself, then all the way, but never more
# than a tenth of itself in RISE_SECONDS.
FALL_SHARE = 0.5
RISE_BAND = 0.1
RISE_LIMIT = 0.1
RISE_SECONDS = 10.0
# The share the bar shows at most before the sweep has ended (it ends at 100 %).
MOST_SHOWN = 0.99


@dataclass(frozen=True)
class ShownEstimate:
    """The estimate as shown: the whole sweep's seconds (None: not known yet) and the
    share done, which never goes back."""

    total: float | None = None
    share: float = 0.0
    rising: bool = False  # catching up with a higher estimate (until it is reached)
    at: float = 0.0  # the elapsed seconds of the last estimate

    def next(self, elapsed: float, left: float | None) -> ShownEstimate:
        """The shown estimate after a new one: `left` seconds left at `elapsed` (None:
        not known; the share still moves with the time spent against the last total)."""
        total, rising = self.total, self.rising
        if left is not None:
            new = elapsed + max(left, 0.0)
            if total is None:
                total = new
            elif new <= total:
                total += FALL_SHARE * (new - total)
                rising = False
            elif rising or new > total * (1 + RISE_BAND):
                gap = new - total
                since = max(elapsed - self.at, 0.0)
                step = min(gap, RISE_LIMIT * total * min(1.0, since / RISE_SECONDS))
                total += step
                rising = step < gap  # until it has caught up
        if total is None:
            return self
        total = max(total, elapsed)  # never less time than already spent
        share = min(elapsed / total, MOST_SHOWN) if total > 0 else 0.0
        return ShownEstimate(total, max(self.share, share), rising, elapsed)

    def seconds_left(self, elapsed: float) -> float | None:
        return None if self.total is None else max(self.total - elapsed, 0.0)


def time_left_text(seconds: float | None) -> str:
    """ "about 40 s left", "about 3 min left"; before a pace is known, "estimating…"
    (short, one line: the label beside the progress bar has a fixed width)."""
    if seconds is None:
        return "estimating…"
    if seconds < 90:
        return f"about {max(5, 5 * round(seconds / 5)):.0f} s left"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60):.0f} min left"
    return f"about {seconds / 3600:.1f} h left"


# The widest texts time_left_text gives, for the label's fixed width.
WIDEST_TIME_LEFT = ("estimating…", "about 85 s left", "about 88 min left", "about 99.9 h left")
