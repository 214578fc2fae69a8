"""Speculative-decoding statistics: exact counts per round and what follows from them.

Definitions (shown to users, so kept exact):
- A *round* is one verification. In speculative mode the draft proposes `d` tokens,
  the target verifies `d + 1` positions (in one forward, or step by step for targets
  that need it), the matching prefix is accepted and the target adds one token of its
  own (a correction, or a bonus when all `d` matched). In plain mode a round is one
  target step and yields one token.
- acceptance = accepted / drafted, over every drafted token the target checked.
- per-position acceptance[i] = rounds whose draft token i was accepted / rounds that
  reached position i (all earlier positions accepted): the draft's conditional hit rate.
- expected acceptance (sampling only) at position i = the mean, over the rounds that
  reached it, of the chance the draft token there is accepted, sum_v min(p(v), q(v)) of
  the target's and the draft's sampler distributions: how close the draft is, without
  the luck of the draws. Overall: the same mean over every checked position.
- mean accepted length = tokens emitted by rounds / rounds: tokens per verification,
  including the target's own token (1.0 for plain decoding).
- The first token comes from the prefill, not from a round: it is counted in `tokens`
  (as a target token) but not in the decode rate or the mean accepted length.
- decode tok/s = tokens emitted by rounds / decode time (prefill excluded).
- cost ratio c = mean draft step time / mean plain target step time.
- predicted speedup = mean accepted length x target step time / (draft time + verify
  time) per round, from measured costs; the classic i.i.d. form from acceptance alone
  is `expected_speedup`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def count_positions(reached: list[int], accepted: list[int], drafted: int, taken: int) -> None:
    """Add one round to per-position tallies (grown to `drafted` as needed): positions
    are reached in turn up to the first rejected one, and the first `taken` accepted."""
    if drafted > len(reached):
        grow = drafted - len(reached)
        reached.extend([0] * grow)
        accepted.extend([0] * grow)
    for i in range(drafted):
        reached[i] += 1
        if i < taken:
            accepted[i] += 1
        else:
            break


def acceptance_by_position(reached: list[int], accepted: list[int]) -> list[float | None]:
    """Per-position acceptance from the tallies (None for a position never reached)."""
    return [(a / r if r else None) for a, r in zip(accepted, reached, strict=True)]


# How a speculative reply drafted (DecodeStats.drafting). SEEDED: fixed lengths although
# adaptive drafting was on, because the request gave a seed: lengths that follow the
# machine's speed would make the same seed draw another reply.
FIXED, ADAPTIVE, SEEDED = "fixed", "adaptive", "seeded"


@dataclass
class RoundStats:
    drafted: int  # draft tokens the target checked this round
    accepted: int  # of those, how many matched (the accepted prefix length)
    emitted: int  # tokens actually output (fewer when a stop token or max_tokens cut in)
    draft_forwards: int
    draft_seconds: float
    target_seconds: float
    target_forwards: int = 1  # more than one only when verifying step by step
    expected: tuple[float, ...] = ()  # sampling: sum_v min(p, q) per checked position
    aside: bool = False  # a plain step because adaptive drafting stepped aside
    note: str = ""  # why adaptive drafting stepped aside, on the round that made it
    # Why it went on drafting, when a check judged that on a busy computer.
    kept_note: str = ""


@dataclass
class DecodeStats:
    mode: str  # a Mode
    draft_length: int
    prompt_tokens: int = 0
    prefill_fed: int = 0  # prompt tokens the target actually ran (the rest were cached)
    prefill_seconds: float = 0.0  # the target's: the time to the first token
    rounds: int = 0
    drafted: int = 0
    accepted: int = 0
    tokens: int = 0
    first_tokens: int = 0  # tokens that came straight from the prefill's logits
    from_draft: int = 0  # emitted tokens that came from accepted drafts
    corrections: int = 0  # emitted tokens that the target produced itself
    target_forwards: int = 0
    draft_forwards: int = 0
    target_seconds: float = 0.0
    draft_seconds: float = 0.0
    decode_seconds: float = 0.0
    position_reached: list[int] = field(default_factory=list)
    position_accepted: list[int] = field(default_factory=list)
    # Sampling: the sum of each checked position's sum_v min(p, q); empty when greedy.
    position_expected: list[float] = field(default_factory=list)
    sampler: str = "greedy"  # the sampler used, as SamplerSettings.describe() says it
    seed: int | None = None  # the seed that reproduces a sampled generation
    window_tokens: int = 0  # the context window in force (context_window.py); 0: none
    max_tokens_asked: int = 0  # the caller's max_tokens when more than fit (else 0)
    draft_prefill_seconds: float = 0.0  # the draft's prefill, done at the first round
    dropped_messages: int = 0  # oldest chat messages left out to fit the window
    drafting: str = FIXED  # ADAPTIVE: the controller chose each round's length; SEEDED
    aside_rounds: int = 0  # plain steps while adaptive drafting stood aside
    asides: int = 0  # times it stepped aside
    aside_note: str = ""  # why, the latest time

    def __post_init__(self) -> None:
        if not self.position_reached:
            self.position_reached = [0] * self.draft_length
            self.position_accepted = [0] * self.draft_length

    def add_judgement(self, aside_note: str, kept_note: str) -> None:
        """Adaptive drafting stepped aside (and why), or went on drafting on a busy
        computer (said in Chat as it streams, not counted)."""
        if aside_note:
            self.asides += 1
            self.aside_note = aside_note

    def add_first_token(self, emitted: int) -> None:
        self.tokens += emitted
        self.first_tokens += emitted
        self.corrections += emitted

    def add_round(self, r: RoundStats) -> None:
        self.rounds += 1
        self.target_forwards += r.target_forwards
        self.drafted += r.drafted
        self.accepted += r.accepted
        self.tokens += r.emitted
        from_draft = min(r.accepted, r.emitted)
        self.from_draft += from_draft
        self.corrections += r.emitted - from_draft
        self.draft_forwards += r.draft_forwards
        self.draft_seconds += r.draft_seconds
        self.target_seconds += r.target_seconds
        if r.aside:
            self.aside_rounds += 1
        if r.note:
            self.add_judgement(r.note, "")
        drafted = min(r.drafted, self.draft_length)
        count_positions(self.position_reached, self.position_accepted, drafted, r.accepted)
        if r.expected:
            if len(self.position_expected) < len(self.position_reached):
                grow = len(self.position_reached) - len(self.position_expected)
                self.position_expected.extend([0.0] * grow)
            for i, chance in enumerate(r.expected[:drafted]):
                self.position_expected[i] += chance

    # -- derived ---------------------------------------------------------------------------

    @property
    def acceptance(self) -> float | None:
        return self.accepted / self.drafted if self.drafted else None

    @property
    def per_position_acceptance(self) -> list[float | None]:
        return acceptance_by_position(self.position_reached, self.position_accepted)

    @property
    def expected_by_position(self) -> list[float | None]:
        """Mean sum_v min(p, q) per draft position (sampling); [] when greedy."""
        return [
            (e / r if r else None)
            for e, r in zip(self.position_expected, self.position_reached, strict=False)
        ]

    @property
    def checked_acceptance(self) -> float | None:
        """Accepted / checked positions: the rate `expected_acceptance` predicts (plain
        `acceptance` divides by every drafted token, checked or not)."""
        checked = sum(self.position_reached)
        return self.accepted / checked if checked else None

    @property
    def expected_acceptance(self) -> float | None:
        """Mean sum_v min(p, q) over every checked position (sampling only); compare it
        with `checked_acceptance`, which has the same denominator."""
        checked = sum(self.position_reached[: len(self.position_expected)])
        return sum(self.position_expected) / checked if checked else None

    @property
    def decode_tokens(self) -> int:
        return self.tokens - self.first_tokens

    @property
    def mean_accepted_length(self) -> float | None:
        return self.decode_tokens / self.rounds if self.rounds else None

    @property
    def tok_s(self) -> float | None:
        return self.decode_tokens / self.decode_seconds if self.decode_seconds > 0 else None

    @property
    def prefill_tok_s(self) -> float | None:
        """Prompt tokens the target ran per second of prefill. In speculative mode the
        time holds the draft's prefill too: it also stands before the first token."""
        if not self.prefill_fed or self.prefill_seconds <= 0:
            return None
        return self.prefill_fed / self.prefill_seconds

    @property
    def mean_target_seconds(self) -> float | None:
        return self.target_seconds / self.target_forwards if self.target_forwards else None

    @property
    def mean_draft_seconds(self) -> float | None:
        return self.draft_seconds / self.draft_forwards if self.draft_forwards else None

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "draft_length": self.draft_length,
            "prompt_tokens": self.prompt_tokens,
            "prefill_fed": self.prefill_fed,
            "prefill_seconds": self.prefill_seconds,
            "rounds": self.rounds,
            "drafted": self.drafted,
            "accepted": self.accepted,
            "tokens": self.tokens,
            "first_tokens": self.first_tokens,
            "from_draft": self.from_draft,
            "corrections": self.corrections,
            "target_forwards": self.target_forwards,
            "draft_forwards": self.draft_forwards,
            "target_seconds": self.target_seconds,
            "draft_seconds": self.draft_seconds,
            "decode_seconds": self.decode_seconds,
            "position_reached": list(self.position_reached),
            "position_accepted": list(self.position_accepted),
            "position_expected": list(self.position_expected),
            "sampler": self.sampler,
            "seed": self.seed,
            "window_tokens": self.window_tokens,
            "max_tokens_asked": self.max_tokens_asked,
            "draft_prefill_seconds": self.draft_prefill_seconds,
            "dropped_messages": self.dropped_messages,
            "drafting": self.drafting,
            "aside_rounds": self.aside_rounds,
            "asides": self.asides,
            "aside_note": self.aside_note,
            "acceptance": self.acceptance,
            "per_position_acceptance": self.per_position_acceptance,
            "checked_acceptance": self.checked_acceptance,
            "expected_acceptance": self.expected_acceptance,
            "expected_by_position": self.expected_by_position,
            "mean_accepted_length": self.mean_accepted_length,
            "tok_s": self.tok_s,
            "prefill_tok_s": self.prefill_tok_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DecodeStats:
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in names})


def cost_ratio(draft_step_seconds: float, target_step_seconds: float) -> float:
    """c: what one draft step costs in units of one plain target step."""
    return draft_step_seconds / target_step_seconds


def predicted_speedup(
    mean_accepted_length: float,
    target_step_seconds: float,
    draft_seconds_per_round: float,
    verify_seconds_per_round: float,
) -> float:
    """Speedup over plain decoding that the measured costs and acceptance promise."""
    return (
        mean_accepted_length
        * target_step_seconds
        / (draft_seconds_per_round + verify_seconds_per_round)
    )


def expected_speedup(acceptance: float, draft_length: int, c: float) -> float:
    """The i.i.d. model (Leviathan et al. 2023): E[tokens per round] / cost per round.

    Assumes a verify of d + 1 tokens costs one target step, which holds while the
    target is memory-bound (phones); on a compute-bound desktop CPU it is optimistic.
    """
    a, d = min(max(acceptance, 0.0), 1.0), draft_length
    tokens = d + 1.0 if a >= 1.0 else (1.0 - a ** (d + 1)) / (1.0 - a)
    return tokens / (d * c + 1.0)


def break_even_acceptance(draft_length: int, c: float, tolerance: float = 1e-6) -> float | None:
    """Smallest acceptance at which speculation gains anything (None if it never can)."""
    if expected_speedup(1.0, draft_length, c) <= 1.0:
        return None
    lo, hi = 0.0, 1.0
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        if expected_speedup(mid, draft_length, c) > 1.0:
            hi = mid
        else:
            lo = mid
    return hi
