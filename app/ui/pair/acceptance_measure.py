"""Measuring a pair's acceptance by draft position on this computer, for the phone forecast.

The Pair page asks for it when no acceptance is measured yet for the chosen pair: a few
greedy speculative replies at a fixed draft length of 6 (the longest the forecast covers,
so every shorter position is reached too), each reply's tallies added to the pair's
store (pair_acceptance.add_tallies, off the GUI thread) as soon as it is written. It runs
in an engine bridge of its own, started for the measurement and closed after it: the
Chat page's bridge would take these replies for its own (its transcript, its figures).
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.measure.pair_acceptance import add_tallies
from app.core.measure.tune_plan import DEFAULT_PROMPTS
from app.core.recipe.drafting_settings import FIXED_DRAFTING
from app.engine.protocol import Done, Generate, Load, Mode, Rounds
from app.ui.base import background
from app.ui.base.engine_bridge import READY, EngineBridge, EngineState
from app.ui.pair.forecast_state import MEASURE_LENGTH, MeasureProgress

log = logging.getLogger("draftdeck.ui.pair")
TOKENS_PER_PROMPT = 128
TALLIES_TASK = "tallies"


class AcceptanceMeasure(QObject):
    progressed = Signal(object)  # MeasureProgress
    finished = Signal(int)  # tokens measured
    failed = Signal(str)  # what went wrong, in words
    cancelled = Signal()

    def __init__(
        self,
        prompts: tuple[str, ...] = DEFAULT_PROMPTS,
        tokens_per_prompt: int = TOKENS_PER_PROMPT,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.prompts = prompts
        self.tokens_per_prompt = tokens_per_prompt
        self.bridge: EngineBridge | None = None
        self.progress: MeasureProgress | None = None
        self.pair: tuple[Path, Path] | None = None
        self._loading = False
        self._measured = 0

    @property
    def running(self) -> bool:
        return self.bridge is not None

    def start(self, target: Path, draft: Path) -> None:
        """Load the pair at draft length 6 in a worker of its own and decode the prompts."""
        if self.running:
            return
        self.pair = (target, draft)
        names = f"{target.name} + {draft.name}"
        self.progress = MeasureProgress(len(self.prompts), self.tokens_per_prompt, names)
        self._measured = 0
        bridge = self.bridge = EngineBridge()
        bridge.state_changed.connect(self._on_state)
        bridge.rounds.connect(self._on_rounds)
        bridge.finished.connect(self._on_done)
        bridge.failed.connect(lambda _code, message: self._fail(message))
        bridge.crashed.connect(self._fail)
        self._loading = True
        refusal = bridge.load(
            Load(target=str(target), draft=str(draft), draft_length=MEASURE_LENGTH)
        )
        if refusal is not None:
            self._fail(refusal.message)
            return
        self.progressed.emit(self.progress)

    def cancel(self) -> None:
        """Stop now; the replies already written keep their tallies."""
        if not self.running:
            return
        self._close()
        self.cancelled.emit()

    def shutdown(self) -> None:
        """The window is closing: stop the worker, say nothing."""
        self._close()

    def _close(self) -> None:
        bridge, self.bridge = self.bridge, None
        background.drop(self, TALLIES_TASK)
        if bridge is not None:
            bridge.stop()
            bridge.shutdown()
            bridge.deleteLater()

    def _fail(self, message: str) -> None:
        if self.running:
            self._close()
            self.failed.emit(message)

    def _on_state(self, state: EngineState) -> None:
        if state == READY and self._loading:
            self._loading = False
            self._next()

    def _next(self) -> None:
        """The next prompt, or the end."""
        progress = self.progress
        if self.bridge is None or progress is None:
            return
        if progress.done_prompts >= progress.prompts:
            self._close()
            self.finished.emit(self._measured)
            return
        progress.tokens = 0
        self.progressed.emit(progress)
        self.bridge.generate(
            Generate(
                prompt=self.prompts[progress.done_prompts],
                mode=Mode.SPECULATIVE,
                max_tokens=self.tokens_per_prompt,
                sampler=None,  # greedy: the tallies the forecast reads are greedy ones
                drafting=FIXED_DRAFTING,  # every round drafts 6, as a phone's recipe does
            )
        )

    def _on_rounds(self, event: Rounds) -> None:
        if self.progress is not None:
            self.progress.tokens += len(event.tokens)
            self.progressed.emit(self.progress)

    def _on_done(self, event: Done) -> None:
        if self.pair is None or self.progress is None or self.bridge is None:
            return
        target, draft = self.pair
        stats = event.stats
        self._measured += stats.decode_tokens  # as the tallies count them
        loaded = self.bridge.pair_state.loaded
        exact = loaded.lossless_expected if loaded is not None else None

        def added() -> None:
            add_tallies(target, draft, stats, exact)

        def on_added(_result: object) -> None:
            assert self.progress is not None
            self.progress.done_prompts += 1
            self._next()

        background.run(self, TALLIES_TASK, added, on_added, lambda e: self._fail(str(e)))
