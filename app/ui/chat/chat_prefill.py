"""The line under the transcript while a long prompt is read: how far each model is and
about how long it has left, so a prefill of minutes is no silence (Esc stops it).

The engine reads a prompt in chunks and reports after each (the bridge's `prefilling`):
the target before the first token, the draft at its first round. The target's pace is
counted from when the reply was asked for, the draft's from its own first report."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QWidget

from app.core.measure.prefill_pace import PrefillPace, prefill_words
from app.ui.base.labels import wrap_to_width

TARGET = "target"


class PrefillProgress(QLabel):
    """Shown only while a model is still reading the prompt."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("pageHint")
        self.setToolTip("Esc or Stop stops the reading; the reply then ends with no tokens")
        wrap_to_width(self)
        self.hide()
        self.pace = PrefillPace(clock)

    def start(self) -> None:
        """A reply was asked for: the target starts reading now."""
        self.pace.forget()
        self.pace.mark(TARGET)
        self.hide()

    def stop(self) -> None:
        """The reply ended (finished, stopped or refused)."""
        self.pace.forget()
        self.hide()

    def show_progress(self, model: str, done: int, total: int) -> None:
        if done >= total:  # that model has read it all
            self.hide()
            return
        self.setText(prefill_words(model, done, total, self.pace.seconds_left(model, done, total)))
        self.show()
