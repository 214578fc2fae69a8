"""Drafting one round: up to `cap` proposals from the draft, one step at a time.

A round stops early when the adaptive controller says so (core/measure/drafting_control.py)
or, without one, when the draft's top-1 probability falls below `stop_below`. Only the
draft's own outputs decide, never the verify to come, so speculative sampling stays exact:
the speculative rule holds for any number of proposals chosen before the verify.
"""

from __future__ import annotations

import numpy as np

from app.core.measure.drafting_control import DraftingControl
from app.engine.worker.mnn_llm import Logits, MnnLlm
from app.engine.worker.sampler import TokenDist
from app.engine.worker.speculative_sampling import SpeculativeSampler
from app.engine.worker.work_clock import work_seconds


def draft_tokens(
    draft: MnnLlm,
    seq: list[int],
    start: int,
    cap: int,
    vocab: int | None,
    sampler: SpeculativeSampler | None,
    control: DraftingControl | None,
    stop_below: float,
) -> tuple[list[int], list[TokenDist], int, float]:
    """Up to `cap` proposals (feeding whatever the draft has not seen yet first; its
    cache holds `seq` from `start`), their distributions when sampling, the draft
    forwards it took and the seconds of those after the first: a round's first forward
    feeds the one or two tokens the draft has not seen (MNN's multi-token path costs
    several one-token steps), so only the later ones are what one more token costs. A
    round stops early when the controller says so, or below `stop_below` without one."""
    proposal: list[int] = []
    qs: list[TokenDist] = []
    judged = control is not None or stop_below > 0.0
    feed = seq[start + len(draft.kv_tokens) :]
    forwards = 0
    later_from: float | None = None  # when the round's second step began (work seconds)
    for i in range(cap):
        if i == 1:
            later_from = work_seconds()
        rows = draft.forward(feed)
        forwards += 1
        confidence = 1.0
        if sampler is None:
            token = int(np.argmax(rows[-1]))
            if judged:
                confidence = _top_probability(rows[-1])
        else:
            row = _as_vocab(rows[-1], vocab)
            token, q = sampler.draw(row, [*seq, *proposal])
            confidence = float(q.probs.max())
        if control is not None:
            if not control.take(i, confidence):
                break
        elif confidence < stop_below:
            break
        proposal.append(token)
        if sampler is not None:
            qs.append(q)
        if control is not None and not control.more(i):
            break
        feed = [token]
    later = work_seconds() - later_from if later_from is not None else 0.0
    return proposal, qs, forwards, later


def _top_probability(row: Logits) -> float:
    """The draft's confidence in its argmax: its softmax probability at temperature 1."""
    x = np.asarray(row, dtype=np.float32)
    return float(1.0 / np.exp(x - x.max()).sum())


def _as_vocab(row: Logits, vocab: int | None) -> Logits:
    """A draft's logits row over the target's vocabulary: a draft exported with a padded
    or shorter embedding gets its extra rows cut, missing ones at -inf (never drawn)."""
    if vocab is None or len(row) == vocab:
        return row
    if len(row) > vocab:
        return row[:vocab]
    padded: Logits = np.full(vocab, -np.inf, dtype=np.float32)
    padded[: len(row)] = row
    return padded
