"""A generation's events as the worker sends them: rounds gathered into one event every
FLUSH_SECONDS (the GUI needs ~10 Hz, not one event per token), prefill progress at once."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.engine.protocol import Round, Rounds
from app.engine.worker.decoder import RoundOutput

EmitRounds = Callable[[Rounds], None]
FLUSH_SECONDS = 0.02


class RoundBatch:
    """Collects rounds and emits them together every FLUSH_SECONDS."""

    def __init__(self, emit: EmitRounds) -> None:
        self._emit = emit
        self._started = self._last = time.perf_counter()
        self._clear()

    def _clear(self) -> None:
        self.tokens: list[int] = []
        self.flags: list[bool] = []
        self.text: list[str] = []
        self.pieces: list[str] = []
        self.rounds: list[Round] = []

    def add(self, out: RoundOutput) -> None:
        self.tokens.extend(out.tokens)
        self.flags.extend(out.from_draft)
        self.text.append(out.text)
        self.pieces.extend(out.pieces)
        r = out.stats
        if r is not None:
            self.rounds.append(
                Round(
                    r.emitted,
                    r.accepted,
                    r.drafted,
                    r.draft_seconds,
                    r.target_seconds,
                    r.expected,
                    r.aside,
                    r.note,
                    r.kept_note,
                )
            )
        if time.perf_counter() - self._last >= FLUSH_SECONDS:
            self.flush()

    def prefill(self, model: str, done: int, total: int) -> None:
        """How far a long prompt's prefill is: sent at once, after what came before."""
        self.flush()
        self._emit(
            Rounds(
                tokens=(),
                from_draft=(),
                text="",
                pieces=(),
                elapsed=time.perf_counter() - self._started,
                rounds=(),
                prefill_model=model,
                prefill_done=done,
                prefill_total=total,
            )
        )

    def flush(self) -> None:
        if self.tokens:
            self._emit(
                Rounds(
                    tokens=tuple(self.tokens),
                    from_draft=tuple(self.flags),
                    text="".join(self.text),
                    pieces=tuple(self.pieces),
                    elapsed=time.perf_counter() - self._started,
                    rounds=tuple(self.rounds),
                )
            )
        self._clear()
        self._last = time.perf_counter()
