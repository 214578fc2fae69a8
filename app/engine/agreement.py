"""Measure verify agreement with the target alone (see app/core/verify_agreement.py).

The target decodes greedily one token at a time; then the same tokens are fed again,
d+1 at a time, exactly as a verify with an identical draft would feed them, and each
row's greedy token is compared with the one-token step's. Every fed token is a true
continuation, so no rollback happens between verifies and the comparison is row by row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.engine.mnn_llm import MnnLlm

DEFAULT_ROWS = 64  # verify rows compared: about +-0.05 at agreement 0.9


def measure(target: MnnLlm, prompt: Sequence[int], draft_length: int, rows: int) -> list[bool]:
    """For each of `rounds * (d + 1)` verify rows (at least `rows`), whether it agrees with
    the one-token step; the target's cache is left empty. The target must have been
    loaded with verify_length = d + 1."""
    width = draft_length + 1
    rounds = checked_rows(draft_length, rows) // width
    target.reset()
    target.begin_prefill()
    steps = [int(np.argmax(target.forward(list(prompt))[-1]))]
    for _ in range(rounds * width):
        steps.append(int(np.argmax(target.forward([steps[-1]])[-1])))
    target.truncate(len(prompt))
    agree: list[bool] = []
    for r in range(rounds):
        fed = steps[r * width : (r + 1) * width]
        guesses = np.argmax(target.forward(fed), axis=-1)
        expected = steps[r * width + 1 : (r + 1) * width + 1]
        agree.extend(int(g) == e for g, e in zip(guesses, expected, strict=True))
    target.reset()
    return agree


def checked_rows(draft_length: int, rows: int) -> int:
    """How many rows `measure` compares for at least `rows`: whole verifies."""
    width = draft_length + 1
    return max(1, -(-rows // width)) * width
