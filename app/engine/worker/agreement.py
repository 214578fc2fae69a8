"""Measure verify agreement with the target alone (see app/core/measure/verify_agreement.py).

The target decodes greedily one token at a time; then the same tokens are fed again,
d+1 at a time, exactly as a verify with an identical draft would feed them, and each
row's greedy token is compared with the one-token step's. Every fed token is a true
continuation, so no rollback happens between verifies and the comparison is row by row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from app.core.infra.errors import EngineError
from app.engine.protocol import FailureCode
from app.engine.worker.mnn_llm import MnnLlm

DEFAULT_ROWS = 64  # verify rows compared: about +-0.05 at agreement 0.9


def measure(
    target: MnnLlm,
    prompt: Sequence[int],
    draft_length: int,
    rows: int,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[bool]:
    """For each of `rounds * (d + 1)` verify rows (at least `rows`), whether it agrees with
    the one-token step. Cancelling is checked between forwards. Afterwards (cancelled or
    not) the target's cache holds what it held before, re-prefilled, so a chat's next turn
    still reuses it. The target must have been loaded with verify_length = d + 1."""
    width = draft_length + 1
    rounds = checked_rows(draft_length, rows) // width

    def forward(tokens: list[int]) -> list[int]:
        """The greedy token of each returned row."""
        if cancelled():
            raise EngineError("the verify agreement check was cancelled", FailureCode.CANCELLED)
        return [int(t) for t in np.argmax(target.forward(tokens), axis=-1)]

    held = list(target.kv_tokens)
    target.reset()
    try:
        target.begin_prefill()
        steps = [forward(list(prompt))[-1]]
        for _ in range(rounds * width):
            steps.append(forward([steps[-1]])[-1])
        target.truncate(len(prompt))
        agree: list[bool] = []
        for r in range(rounds):
            guesses = forward(steps[r * width : (r + 1) * width])
            expected = steps[r * width + 1 : (r + 1) * width + 1]
            agree.extend(g == e for g, e in zip(guesses, expected, strict=True))
    finally:
        target.reset()
        if held:
            target.begin_prefill()
            target.forward(held)
    return agree


def checked_rows(draft_length: int, rows: int) -> int:
    """How many rows `measure` compares for at least `rows`: whole verifies."""
    width = draft_length + 1
    return max(1, -(-rows // width)) * width
