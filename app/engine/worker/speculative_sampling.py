"""Exact speculative sampling (Leviathan et al. 2023; Chen et al. 2023).

The draft draws x_i from q_i, its logits row after the recipe's sampler
(`sampler.adjusted_probs`); the target's verify gives p_0..p_d for the same positions,
after the same sampler with the same history (prompt, generated tokens and the accepted
part of the proposal). x_i is accepted with probability min(1, p(x_i) / q(x_i)); at the
first rejection the token is drawn from normalise(max(0, p - q)) and the round ends;
when all d are accepted a bonus token is drawn from p_d. Every emitted token is then
distributed exactly as the target's own sampler would draw it.

Randomness: one seed gives two independent numpy streams (SeedSequence(seed).spawn(2)).
- The token stream is indexed by position: the token at position t (t = len(history))
  is always drawn with the same uniform u_t, by inverse CDF, whichever distribution it
  comes from: a draft proposal, a bonus, or plain decoding. A proposal discarded after
  an earlier rejection never influenced anything kept, so reusing its u_t for the next
  proposal at t is still a fresh draw.
- The verify stream gives, in order, the uniforms of acceptance tests and residual
  draws. A test whose answer is certain (p(x) >= q(x), or p(x) = 0) draws nothing.

Guarantees: the same seed, prompt, settings, mode and draft length give the same text
when every round drafts the same number of tokens (fixed drafting, or a per-round stop,
which reads only the draft's own outputs). Adaptive drafting chooses each round's length
from the speed it measures, so its text from a seed may differ from run to run (each
run still distributed exactly as the target's sampler).
Plain and speculative decoding give the same text when the draft's distribution equals
the target's (p = q: every proposal is the target's own draw and accepted); otherwise
they are equal in distribution only (an accepted token is the draft's draw with the
same uniform, not the target's). Greedy settings draw nothing and reproduce the
greedy rule (accept while the proposal is the target's argmax, then the argmax).

Use one `SpeculativeSampler` per generation:
    sampler = SpeculativeSampler(settings, seed)
    token, q = sampler.draw(draft_row, history + proposal)       # each draft step
    verdict = sampler.verify(target_rows, proposal, qs, history)  # the d+1 verify rows
    token, _ = sampler.draw(target_row, history)                  # plain decoding
A stepwise verify calls `check` per position and `draw` for the bonus.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.core.recipe.sampler_settings import SamplerSettings
from app.engine.worker.sampler import Row, TokenDist, TokenIds, adjusted_probs

# Token-stream uniforms are made in blocks (the values do not depend on the block size).
_BLOCK = 256


@dataclass(frozen=True)
class Check:
    """One verified position."""

    accepted: bool
    token: int  # the proposal if accepted, else the residual draw
    expected_acceptance: float  # Σ_v min(p(v), q(v))


@dataclass(frozen=True)
class Verdict:
    """One verified round."""

    accepted: int  # n: proposal[:n] is kept
    token: int  # then this one: the correction (n < d) or the bonus (n = d)
    expected_acceptance: list[float]  # per checked position: n + 1 if rejected, else d


class SpeculativeSampler:
    def __init__(self, settings: SamplerSettings, seed: int | None = None) -> None:
        self.settings = settings
        # The seed actually used, so a run with a fresh seed can be repeated.
        self.seed = seed if seed is not None else secrets.randbits(63)
        token_seq, verify_seq = np.random.SeedSequence(self.seed).spawn(2)
        self._token_rng = np.random.Generator(np.random.PCG64(token_seq))
        self._verify_rng = np.random.Generator(np.random.PCG64(verify_seq))
        self._uniforms: npt.NDArray[np.float64] = np.zeros(0)
        # Only penalties read the history: skip building it otherwise.
        self._needs_history = "penalty" in settings.steps

    def distribution(self, row: Row, history: Sequence[int]) -> TokenDist:
        """The sampler's distribution for the token after `history` (q or p)."""
        past: Sequence[int] | TokenIds = history if self._needs_history else _NO_HISTORY
        return adjusted_probs(row, self.settings, past)

    def draw(self, row: Row, history: Sequence[int]) -> tuple[int, TokenDist]:
        """The token at position len(history), from the token stream, and its distribution.

        For draft proposals (keep the distribution: it is q for `verify`), plain
        decoding, the first token after a prefill and a stepwise verify's bonus.
        """
        dist = self.distribution(row, history)
        return dist.pick(self._uniform(len(history))), dist

    def check(self, row: Row, token: int, q: TokenDist, history: Sequence[int]) -> Check:
        """Accept or replace the proposed `token` drawn from `q` after `history`."""
        p = self.distribution(row, history)
        expected = p.overlap(q)
        px, qx = p.prob(token), q.prob(token)
        if px >= qx or (px > 0.0 and self._verify_rng.random() * qx < px):
            return Check(True, token, expected)
        residual = np.maximum(p.probs - q.probs_at(p.tokens), 0.0)
        if residual.sum() <= 0.0:
            residual = p.probs  # p ≈ q up to rounding: nothing left to correct
        fix = TokenDist(p.tokens, residual, p.vocab)
        u = self._verify_rng.random() if len(p.tokens) > 1 else 0.0
        return Check(False, fix.pick(u), expected)

    def verify(
        self,
        rows: Row,
        proposal: Sequence[int],
        qs: Sequence[TokenDist],
        history: Sequence[int],
    ) -> Verdict:
        """The speculative rule over one verify: `rows` are the target's d+1 logits rows.

        Row i is the target's logits after history + proposal[:i]; qs[i] is the draft's
        distribution that proposal[i] was drawn from.
        """
        d = len(proposal)
        if len(qs) != d or len(rows) != d + 1:
            raise ValueError(f"verify needs d+1 rows and d distributions (d = {d})")
        seen = list(history)
        expected: list[float] = []
        for i in range(d):
            checked = self.check(rows[i], proposal[i], qs[i], seen)
            expected.append(checked.expected_acceptance)
            if not checked.accepted:
                return Verdict(i, checked.token, expected)
            seen.append(proposal[i])
        bonus, _ = self.draw(rows[d], seen)
        return Verdict(d, bonus, expected)

    def _uniform(self, position: int) -> float:
        if position >= len(self._uniforms):
            more = position + 1 - len(self._uniforms)
            more = -(-more // _BLOCK) * _BLOCK
            self._uniforms = np.concatenate([self._uniforms, self._token_rng.random(more)])
        return float(self._uniforms[position])


_NO_HISTORY: TokenIds = np.zeros(0, dtype=np.int64)
