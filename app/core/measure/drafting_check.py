"""Whether drafting pays, judged in pairs of rounds run at the same moment.

A busy computer (a browser, a build, a second model) slows whichever forward its bursts
land on, for tenths of a second to seconds at a time. Speculative rounds measured in a
burst against plain steps measured before it read as a loss that drafting did not make
(an identical draft read 0.2-1.0x plain, a pair that pays 1.7x was stood aside). So
a judgement alternates a plain round and a speculative one and compares each
speculative round with the plain round just before it: a burst slows both, and what is
compared is a ratio of work, which load does not change. Its seconds are work seconds
where the platform counts a thread's CPU time finely (a burst adds none to them), else
the wall's; wall time is kept for what the user sees and for saying how busy it was.

Each pair j gives the tokens e_j its speculative round emitted, its seconds s_j and the
plain round's p_j. The speedup over plain is (sum e / sum s) * (sum p / n): sums, not a
mean of per-pair ratios, since a step of a tiny model is shorter than the scheduler's
slice, and one round preempted beside one that was not makes a ratio of 100 (a mean of
such ratios read 0.1x plain for a pair at 0.5x). Its 95 % interval comes from the delta
method on the logarithm (each pair's e/mean e - s/mean s + p/mean p). A burst that lands
on one half of a pair widens the interval: evidence has to outweigh the noise it was
measured in. Drafting is kept as soon as the interval's low end is above 1 (after
CLEAR_PAIRS pairs), stood aside only when its high end is below 1 after ASIDE_PAIRS
pairs, never on fewer; a check still in doubt after MAX_PAIRS keeps drafting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.96
CLEAR_PAIRS = 6  # pairs before a check may find that drafting pays
ASIDE_PAIRS = 8  # pairs before it may find that drafting does not (a handful is 5)
MAX_PAIRS = 24  # a check in doubt this long keeps drafting (the two are within noise)
# The check's plain steps this much slower than this computer's quiet plain step: the
# computer was busy while it judged (said with the judgement, in words).
BUSY = 1.25


@dataclass(frozen=True)
class Speedup:
    """Speculation's speedup over plain decoding and its 95 % interval, from `pairs`."""

    speedup: float
    low: float
    high: float
    pairs: int
    paired: bool = True  # each round beside a plain one; else by CPU time, as they ran

    def words(self) -> str:
        how = "each beside a plain one" if self.paired else "by the CPU time they took"
        return (
            f"{self.speedup:.2f}x plain ({max(self.low, 0.0):.2f}-{self.high:.2f}, 95 %, "
            f"{self.pairs} speculative rounds {how})"
        )


@dataclass(frozen=True)
class Judgement:
    """What a check found: drafting stands aside for `gap` tokens (0: it goes on), and
    how busy the computer was while it judged (its plain steps over their quiet time)."""

    found: Speedup
    gap: int
    busy: float

    @property
    def aside(self) -> bool:
        return self.gap > 0

    @property
    def disturbed(self) -> bool:
        return self.busy >= BUSY

    def describe(self) -> str:
        how = (
            "each speculative round was compared with the plain round run just before it"
            if self.found.paired
            else "rounds were judged by the CPU time they took, which other programs do not add to"
        )
        busy = (
            f"; this computer was busy while it was judged (its steps took "
            f"{self.busy:.1f}x as long as when quiet), so {how}"
            if self.disturbed
            else ""
        )
        if self.aside:
            return (
                f"drafting did not pay: {self.found.words()}{busy}; decoding plain for "
                f"{self.gap} tokens, then drafting is tried again"
            )
        return f"drafting pays: {self.found.words()}{busy}"


class PairedCheck:
    """One check: plain and speculative rounds alternate, a plain round first. Unless
    `paired` is False: where work seconds are CPU time, which a burst does not add to,
    speculative rounds run on as they would and each is set beside the plain step
    measured in a stretch of plain ones (a plain round between speculative ones runs
    on cold caches: on a tiny model that made an identical draft read 1.1x plain)."""

    def __init__(self, paired: bool = True) -> None:
        self.paired = paired
        self.pairs: list[tuple[int, float, float]] = []  # emitted, spec seconds, plain seconds
        self._plain: float | None = None  # the pair's plain half, run just now
        self._plain_wall = 0.0
        self._wall = self._work = 0.0  # the judged rounds' seconds by each clock
        self._skipped: list[tuple[int, float]] = []  # emitted, seconds of rounds not judged

    @property
    def wants_plain(self) -> bool:
        """Whether the next round is the plain half of a pair."""
        return self.paired and self._plain is None

    def plain(self, seconds: float, wall: float) -> None:
        if self.paired and seconds > 0:
            self._plain, self._plain_wall = seconds, wall

    def speculative(self, emitted: int, seconds: float, wall: float, plain: float | None) -> None:
        """A speculative round: after the plain half of its pair, or beside `plain`,
        the plain step measured apart, when not paired."""
        beside = self._plain if self.paired else plain
        if beside is not None:
            self.pairs.append((emitted, seconds, beside))
            self._wall += wall + (self._plain_wall if self.paired else 0.0)
            self._work += seconds + (beside if self.paired else 0.0)
        self._plain = None

    def skip(self, emitted: int, seconds: float) -> None:
        """A speculative round that is no sample (MNN cloned a module): pair anew. What
        it cost still counts in what the check lost."""
        self._plain = None
        self._skipped.append((emitted, seconds))

    def speedup(self) -> Speedup | None:
        n = len(self.pairs)
        if n < 2:
            return None
        tokens = sum(e for e, _, _ in self.pairs) / n
        spec = sum(s for _, s, _ in self.pairs) / n
        plain = sum(p for _, _, p in self.pairs) / n
        rate = tokens / spec * plain
        terms = [e / tokens - s / spec + p / plain for e, s, p in self.pairs]
        mean = sum(terms) / n
        error = math.sqrt(sum((t - mean) ** 2 for t in terms) / (n - 1) / n)
        low, high = rate * math.exp(-Z95 * error), rate * math.exp(Z95 * error)
        return Speedup(rate, low, high, n, self.paired)

    def verdict(self) -> tuple[Speedup, bool] | None:
        """(what was found, whether drafting pays) once the check has decided; None
        while it is still in doubt. In doubt after MAX_PAIRS: drafting goes on."""
        found = self.speedup()
        if found is None:
            return None
        n = found.pairs
        if n >= CLEAR_PAIRS and found.low >= 1.0:
            return found, True
        if n >= ASIDE_PAIRS and found.high < 1.0:
            return found, False
        if n >= MAX_PAIRS:
            return found, True
        return None

    def lost(self) -> float:
        """Plain steps the check's speculative rounds lost against the plain rounds run
        beside them (negative: gained): a count of work, as load does not change it."""
        if not self.pairs:
            return 0.0
        plain = sum(p for _, _, p in self.pairs) / len(self.pairs)
        rounds = [(e, s) for e, s, _ in self.pairs] + self._skipped
        return sum(s / plain - e for e, s in rounds)

    def busy(self, quiet_plain: float | None) -> float:
        """How much slower the check's rounds ran than on a quiet computer (1: as
        quiet): their wall seconds over their work seconds where work is CPU time,
        else their plain steps over this computer's quiet plain step."""
        if not self.pairs or self._work <= 0:
            return 1.0
        plain = sum(p for _, _, p in self.pairs) / len(self.pairs)
        return max(self._wall / self._work, plain / quiet_plain if quiet_plain else 1.0)
