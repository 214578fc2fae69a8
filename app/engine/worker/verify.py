"""A round's verify by the target, and the cut-back of a model's cache after it.

Greedy verification of the whole proposal in one forward lives in the decoder (it is the
common case and a few lines); here are the speculative-sampling rule, verification one
token at a time (linear attention whose state MNN cannot roll back: decoder.py), and
the cut-back, which rebuilds such a state from the start.
"""

from __future__ import annotations

import numpy as np

from app.engine.worker.mnn_llm import MnnLlm
from app.engine.worker.sampler import TokenDist
from app.engine.worker.speculative_sampling import SpeculativeSampler


def verify_sampled(
    target: MnnLlm,
    sampler: SpeculativeSampler,
    seq: list[int],
    proposal: list[int],
    qs: list[TokenDist],
    stepwise: bool,
) -> tuple[int, int, int, list[float]]:
    """The speculative-sampling rule: accepted count, the next token, target forwards
    and each checked position's expected acceptance."""
    if not stepwise:
        verdict = sampler.verify(target.forward([seq[-1], *proposal]), proposal, qs, seq)
        return verdict.accepted, verdict.token, 1, verdict.expected_acceptance
    # One target step per position, stopping at the first rejection.
    history, expected = list(seq), []
    row = target.forward([seq[-1]])[-1]
    for n, token in enumerate(proposal):
        checked = sampler.check(row, token, qs[n], history)
        expected.append(checked.expected_acceptance)
        if not checked.accepted:
            return n, checked.token, n + 1, expected
        history.append(token)
        row = target.forward([token])[-1]
    return len(proposal), sampler.draw(row, history)[0], len(proposal) + 1, expected


def verify_stepwise(target: MnnLlm, last: int, proposal: list[int]) -> tuple[int, int, int]:
    """Feed the target one token at a time, stopping at the first mismatch."""
    guess = int(np.argmax(target.forward([last])[-1]))
    n = 0
    while n < len(proposal) and proposal[n] == guess:
        guess = int(np.argmax(target.forward([proposal[n]])[-1]))
        n += 1
    return n, guess, n + 1


def cut_back(model: MnnLlm, keep: int, linear: bool, seq: list[int], accepted: list[int]) -> None:
    """Leave `keep` tokens in the model's cache (of `seq` and then `accepted`)."""
    if keep >= len(model.kv_tokens):
        return
    if not linear:
        model.truncate(keep)
        return
    # Linear attention: rebuild the state from the start.
    valid = (seq + accepted)[:keep]
    model.reset()
    model.begin_prefill()
    model.forward(valid)
