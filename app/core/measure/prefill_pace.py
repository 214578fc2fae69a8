"""How long a long prompt's reading has left, from the pace seen so far.

The engine reports after each chunk how many prompt tokens a model has read; the time
left is the tokens still to read at the rate since that model's first mark. A mark can
be set before the first report (the moment the reply was asked for), so the first
report already has an estimate."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.infra.units import format_time_left


def prefill_words(model: str, done: int, total: int, seconds_left: float | None) -> str:
    """ "Reading the prompt: 1,024 / 2,980 tokens (target), about 12 s left"."""
    words = f"Reading the prompt: {done:,} / {total:,} tokens ({model})"
    left = format_time_left(seconds_left) if done < total else ""  # read: nothing left
    return f"{words}, about {left} left" if left else words


class PrefillPace:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._marks: dict[str, tuple[float, int]] = {}  # model -> (when, tokens read then)

    def mark(self, model: str, done: int = 0) -> None:
        """`model` had read `done` tokens now (0: it is about to start)."""
        self._marks[model] = (self._clock(), done)

    def forget(self) -> None:
        self._marks = {}

    def seconds_left(self, model: str, done: int, total: int) -> float | None:
        """None until a pace is seen (the model's first report without an earlier mark)."""
        now = self._clock()
        since, done_then = self._marks.setdefault(model, (now, done))
        if now <= since or done <= done_then:
            return None
        return (total - done) * (now - since) / (done - done_then)
