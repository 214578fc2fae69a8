"""The recipe's sampler as numpy: one logits row in, the distribution of the pick out.

`adjusted_probs(row, settings, history)` runs MNN 3.6.1's pipeline (see
app/core/recipe/sampler_settings.py for the steps and their order) and returns a
`TokenDist`: the kept token ids in ascending order and their probabilities. A sparse
result because truncation usually keeps a few dozen of ~150k tokens, and the
speculative rule only ever needs p and q on their supports. Without truncation the
support is the whole vocabulary (`TokenDist.full`) and lookups index directly.

Each step works on the kept candidates, as MNN does: probability-based steps (topP,
minP, tfs, typical) use softmax(logits / temperature) over the tokens still kept, and
the final distribution is that softmax over the last kept set. Greedy is a one-hot on
the argmax of the kept logits, lowest id first on ties (np.argmax's rule, so greedy
reproduces the decoder's argmax). Sorting is stable, so ties that MNN's std::sort
leaves unspecified are broken by token id here.

Cost at a 151,936-token vocabulary is a few passes over it: top-k partitions block
maxima, the softmax skips exp where float32 exp is 0, and top-p, tfs and typical avoid
an argsort of the vocabulary (app/engine/worker/nucleus.py, same answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from app.core.recipe.sampler_settings import SamplerSettings
from app.engine.worker import nucleus

TokenIds = npt.NDArray[np.int64]
Probs = npt.NDArray[np.float64]
Row = npt.NDArray[np.floating[Any]]

# Top-k over a large set first keeps the tokens at or above the k-th largest of the
# maxima of blocks this wide (that value is at most the k-th largest logit).
_TOP_K_BLOCK = 128
_PICK_BLOCK = 512
# Above this many candidates the softmax's exp runs in float32 (2-3x faster; the sum
# and the result stay float64).
_FAST_EXP = 4096
# np.exp in float32 is 0 below about -103.97; logits more than _SKIP temperatures below
# the top are skipped when that bounds their z under _UNDERFLOW.
_SKIP = 120.0
_UNDERFLOW = -110.0


@dataclass(frozen=True)
class TokenDist:
    """A distribution over a vocabulary of `vocab` ids, stored on its support."""

    tokens: TokenIds  # ascending ids; all of range(vocab) when `full`
    probs: Probs  # one per token, summing to 1
    vocab: int

    @property
    def full(self) -> bool:
        return len(self.tokens) == self.vocab

    def prob(self, token: int) -> float:
        if self.full:
            return float(self.probs[token])
        at = int(np.searchsorted(self.tokens, token))
        hit = at < len(self.tokens) and int(self.tokens[at]) == token
        return float(self.probs[at]) if hit else 0.0

    def probs_at(self, tokens: TokenIds) -> Probs:
        """Probabilities of `tokens` (ascending), 0 outside the support."""
        if len(tokens) == self.vocab:  # all ids, in order
            if self.full:
                return self.probs
            dense = np.zeros(self.vocab)
            dense[self.tokens] = self.probs
            return dense
        if self.full:
            return self.probs[tokens]
        at = np.minimum(np.searchsorted(self.tokens, tokens), len(self.tokens) - 1)
        return np.where(self.tokens[at] == tokens, self.probs[at], 0.0)

    def overlap(self, other: TokenDist) -> float:
        """Σ_v min(p(v), q(v)): the chance a draft drawn from `other` is accepted."""
        return float(np.minimum(self.probs, other.probs_at(self.tokens)).sum())

    def pick(self, u: float) -> int:
        """The token at quantile `u` in [0, 1) of the distribution (inverse CDF)."""
        size = len(self.tokens)
        if size == 1:
            return int(self.tokens[0])
        # Two levels (blocks, then within one) so a full vocabulary costs one pass.
        starts = np.arange(0, size, _PICK_BLOCK)
        block_cdf = np.cumsum(np.add.reduceat(self.probs, starts))
        x = u * float(block_cdf[-1])
        block = min(int(np.searchsorted(block_cdf, x, side="right")), len(starts) - 1)
        x -= float(block_cdf[block - 1]) if block else 0.0
        start = int(starts[block])
        cdf = np.cumsum(self.probs[start : start + _PICK_BLOCK])
        at = min(int(np.searchsorted(cdf, x, side="right")), len(cdf) - 1)
        return int(self.tokens[start + at])


def one_hot(token: int, vocab: int) -> TokenDist:
    return TokenDist(np.array([token], dtype=np.int64), np.ones(1), vocab)


def adjusted_probs(
    logits: Row, settings: SamplerSettings, history: Sequence[int] | TokenIds
) -> TokenDist:
    """The distribution the recipe's sampler draws the next token from.

    `logits` is one row (vocab,), `history` every token the model has seen before this
    position, prompt included (MNN's `history_tokens`); only penalties read it.
    """
    row = np.asarray(logits).reshape(-1)
    vocab = row.shape[0]
    if settings.greedy and not settings.steps:
        return one_hot(int(np.argmax(row)), vocab)
    tokens: TokenIds | None = None  # None: all of range(vocab), in order
    values = row
    for step in settings.steps:
        if step in ("logit_bias", "banned_tokens", "penalty"):
            values = _edit(values, tokens, step, settings, history)
        elif step == "topK":
            tokens, values = _top_k(tokens, values, settings.top_k)
        elif settings.temperature > 0.0:
            # Probability steps need a temperature; at temperature 0 only the argmax
            # matters and every step but typical keeps it.
            probs = _softmax(values, settings.temperature)
            keep = _FILTERS[step](probs, settings)
            if keep is not None:
                tokens = keep if tokens is None else tokens[keep]
                values = values[keep]
    kept = tokens if tokens is not None else _all_ids(vocab)
    if settings.is_greedy:
        return one_hot(int(kept[int(np.argmax(values))]), vocab)
    return TokenDist(kept, _softmax(values, settings.temperature), vocab)


# -- steps -------------------------------------------------------------------------------


def _softmax(values: Row, temperature: float) -> Probs:
    if len(values) <= _FAST_EXP:
        x = values.astype(np.float64)
        x -= x.max()
        x *= 1.0 / temperature
        np.exp(x, out=x)
        x /= x.sum()
        return x
    y = values.astype(np.float32)
    top = y.max()
    scale = np.float32(1.0 / temperature)
    if np.isfinite(top):
        # Logits far below the top have exp exactly 0 in float32: exp only the rest.
        # `below` bounds every skipped z (float32 rounding is monotone).
        floor = np.float32(float(top) - _SKIP * temperature)
        below = (floor - top) * scale
        head = np.flatnonzero(y >= floor)
        if below < _UNDERFLOW and len(head) <= len(y) // 4:
            out = np.zeros(len(y))
            e = np.exp((y[head] - top) * scale).astype(np.float64)
            out[head] = e
            out[head] = e / out.sum()  # the full row's sum, as the dense path's
            return out
    y -= top
    y *= scale
    np.exp(y, out=y)
    out = y.astype(np.float64)
    out /= out.sum()
    return out


def _edit(
    values: Row,
    tokens: TokenIds | None,
    step: str,
    settings: SamplerSettings,
    history: Sequence[int] | TokenIds,
) -> Row:
    """logit_bias, banned_tokens or the penalties: a few logits change."""
    if step == "logit_bias":
        ids = np.array([t for t, _ in settings.logit_bias], dtype=np.int64)
        change = np.array([b for _, b in settings.logit_bias])
    elif step == "banned_tokens":
        ids = np.array(settings.banned_tokens, dtype=np.int64)
        change = np.full(len(ids), -np.inf)
    else:
        ids, factor, minus = _penalties(settings, np.asarray(history, dtype=np.int64))
        if len(ids) == 0:
            return values
    at, found = _positions(ids, tokens, len(values))
    if not found.any():
        return values
    out = values.astype(np.float64, copy=True)
    at = at[found]
    if step == "logit_bias":
        out[at] += change[found]
    elif step == "banned_tokens":
        out[at] = -np.inf
    else:
        x, f = out[at], factor[found]
        # MNN: divide a positive logit by the penalty, multiply a negative one.
        x = np.where(f > 1.0, np.where(x >= 0.0, x / f, x * f), x)
        out[at] = x - minus[found]
    return out


def _positions(
    ids: TokenIds, tokens: TokenIds | None, size: int
) -> tuple[TokenIds, npt.NDArray[np.bool_]]:
    """Where token ids sit among the kept candidates, and which of them are kept."""
    if tokens is None:
        found = (ids >= 0) & (ids < size)
        return np.where(found, ids, 0), found
    at = np.minimum(np.searchsorted(tokens, ids), len(tokens) - 1)
    return at, tokens[at] == ids


def _penalties(s: SamplerSettings, prev: TokenIds) -> tuple[TokenIds, Probs, Probs]:
    """MNN's stepPenalty: per penalised token, its repetition factor and what to subtract."""
    empty = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    if s.repetition_penalty <= 1.0 and s.presence_penalty <= 0.0 and s.frequency_penalty <= 0.0:
        return empty
    if len(prev) == 0:
        return empty
    rep = min(s.repetition_penalty, s.max_penalty)
    start = len(prev) - s.penalty_window if 0 < s.penalty_window < len(prev) else 0
    ids, inverse, counts = np.unique(prev[start:], return_inverse=True, return_counts=True)
    factor = np.full(len(ids), rep)
    n = s.n_gram
    if s.ngram_factor > 1.0 and len(prev) >= n:
        # The run of tokens before position i that repeats the last n-1 tokens (newest
        # first); a full-length run earns max_penalty. Loops over n, not the history.
        at = np.arange(start, len(prev))
        run = np.zeros(len(at), dtype=np.int64)
        alive = np.ones(len(at), dtype=bool)
        for k in range(n - 1):
            j = at - 1 - k
            alive &= (j >= 0) & (prev[np.maximum(j, 0)] == prev[len(prev) - 1 - k])
            run += alive
        # n_gram 1 has no earlier tokens to match: MNN's loop never runs then.
        pen = np.where(
            (n > 1) & (run == n - 1), s.max_penalty, rep * s.ngram_factor ** run.astype(float)
        )
        np.maximum.at(factor, inverse, pen)
    frequency = s.frequency_penalty if s.frequency_penalty > 0.0 else 0.0
    minus = s.presence_penalty + frequency * counts.astype(np.float64)
    return ids.astype(np.int64), factor, minus


def _top_k(tokens: TokenIds | None, values: Row, k: int) -> tuple[TokenIds | None, Row]:
    size = len(values)
    if k <= 0 or k >= size:
        return tokens, values
    blocks = size // _TOP_K_BLOCK
    if blocks >= 4 * k:
        maxima = values[: blocks * _TOP_K_BLOCK].reshape(blocks, _TOP_K_BLOCK).max(axis=1)
        pool = np.flatnonzero(values >= np.partition(maxima, blocks - k)[blocks - k])
    else:
        pool = np.arange(size)
    keep = np.sort(pool[np.argpartition(values[pool], len(pool) - k)[len(pool) - k :]])
    return (keep if tokens is None else tokens[keep]), values[keep]


def _top_p(probs: Probs, s: SamplerSettings) -> TokenIds | None:
    return nucleus.top_p(probs, s.top_p)


def _min_p(probs: Probs, s: SamplerSettings) -> TokenIds | None:
    """Tokens whose probability is at least min_p (absolute, as in MNN), else the top."""
    keep = np.flatnonzero(probs >= s.min_p)
    return keep if len(keep) else np.array([int(np.argmax(probs))], dtype=np.int64)


def _tfs(probs: Probs, s: SamplerSettings) -> TokenIds | None:
    return nucleus.tfs(probs, s.tfs_z)


def _typical(probs: Probs, s: SamplerSettings) -> TokenIds | None:
    return nucleus.typical(probs, s.typical)


_FILTERS = {"topP": _top_p, "minP": _min_p, "tfs": _tfs, "typical": _typical}


@lru_cache(maxsize=4)
def _all_ids(vocab: int) -> TokenIds:
    ids = np.arange(vocab, dtype=np.int64)
    ids.flags.writeable = False
    return ids
