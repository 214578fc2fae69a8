"""The Chat page's mode: the Speculative/Plain combo and the line saying why it is
what it is (a pair that cannot gain on this MNN, or a pair that cannot work together,
whose target alone still chats in Plain mode)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from PySide6.QtWidgets import QComboBox, QLabel

from app.engine.protocol import Mode
from app.ui.base.labels import wrap_to_width
from app.ui.base.pair_state import Pair, PairState
from app.ui.chat.chat_header import (
    EXACT_ROLLBACK_NOTE,
    PLAIN_DEFAULT_TIP,
    plain_default_note,
)

MODES = (Mode.SPECULATIVE, Mode.PLAIN)  # the combo's items, in order
WHY_LINK = "why"  # the blocked note's link to the engine's reason
SPECULATIVE_AGAIN = (
    "Mode: Speculative again (Plain was chosen because the previous pair cannot work together)."
)


def blocked_note(alone: bool) -> str:
    if alone:
        return "This pair cannot work together: Plain mode runs the target alone."
    return "This pair cannot work together. Choose Plain to chat with the target alone."


class ModeChoice:
    """The combo and its note. The pair's facts are the bridge's snapshot, read through
    `pair_state` and rendered by `show`; kept here is only what the user chose."""

    def __init__(self, pair_state: Callable[[], PairState] = PairState) -> None:
        self._pair_state = pair_state
        self.combo = QComboBox()
        self.combo.addItems(["Speculative", "Plain"])
        self.combo.setToolTip(
            "Speculative: target + draft. Plain: the target alone, to compare "
            "on the same conversation"
        )
        self.note = wrap_to_width(QLabel())  # a long reason never widens the window
        self.note.setObjectName("pageHint")
        self.note.hide()
        self.note.linkActivated.connect(self._on_link)
        self._why_open = False  # a blocked pair's reason unfolded under the note
        # The pair the mode was switched to Plain for (a replayed load keeps the choice).
        self._plain_for: Pair | None = None
        # The pair whose mode was set by a reopened conversation: its load keeps it.
        self._kept_for: Pair | None = None
        # While another pair's conversation is read: the mode the current pair had.
        self._held_over: int | None = None

    @property
    def name(self) -> Mode:
        return MODES[self.combo.currentIndex()]

    def new_pair(self, pair: Pair) -> str:
        """A pair is about to load. Plain chosen to chat with a blocked pair's target
        does not carry over to another pair unsaid: that one gets Speculative back
        (quietly: the previous pair is not loaded again for it). Returns the words
        saying so ("" when the mode stays)."""
        words = ""
        before = self._pair_state()
        if before.blocked and before.pair != pair and self.name == Mode.PLAIN:
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(MODES.index(Mode.SPECULATIVE))
            self.combo.blockSignals(False)
            words = SPECULATIVE_AGAIN
        self._kept_for = None
        return words

    def restore(self, mode: str | None, pair: Pair) -> None:
        """The mode a reopened conversation used, kept when the pair's load comes in
        (None: it has no reply yet, the mode stays)."""
        if mode in MODES:
            self.combo.setCurrentIndex(MODES.index(mode))
            self._kept_for, self._plain_for = pair, None

    def show_held(self, mode: str | None) -> None:
        """Read only: the box shows the mode the conversation on screen was held in,
        disabled (nothing is sent while reading); `leave_held` puts the current pair's
        back. Signals are held so the pair is not loaded again for a mode shown."""
        if self._held_over is None:
            self._held_over = self.combo.currentIndex()
        if mode in MODES:
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(MODES.index(mode))
            self.combo.blockSignals(False)
        self.combo.setEnabled(False)

    def leave_held(self) -> None:
        if self._held_over is not None:
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(self._held_over)
            self.combo.blockSignals(False)
            self._held_over = None
        self.combo.setEnabled(True)

    def show(self, state: PairState) -> None:
        """Why the mode is what it is: a pair that cannot work together (its target
        alone in Plain, the engine's words behind "Why?"; refused, the header says
        them), or one that cannot gain on this MNN (Plain by default, once per pair: the
        user may still pick Speculative; the next pair that can gain gets Speculative
        back)."""
        if state.blocked:
            self._why_open = self._why_open and state.alone  # refused again: folded
            self._show_blocked(state)
            return
        loaded = state.loaded
        if loaded is None:
            self.note.hide()  # nothing to say before the pair loads
            return
        if loaded.cannot_pay:
            if self._plain_for != state.pair and self._kept_for != state.pair:
                self.combo.setCurrentIndex(MODES.index(Mode.PLAIN))
                self._plain_for = state.pair
            self.note.setText(plain_default_note(loaded.cannot_pay))
            self.note.setToolTip(PLAIN_DEFAULT_TIP)
            self.note.show()
            return
        if self._plain_for is not None:
            self.combo.setCurrentIndex(MODES.index(Mode.SPECULATIVE))
            self._plain_for = None
        if loaded.linear_rollback:
            self.note.setText(EXACT_ROLLBACK_NOTE)
            self.note.setToolTip("")
            self.note.show()
        else:
            self.note.hide()

    def _show_blocked(self, state: PairState) -> None:
        text = escape(blocked_note(state.alone))
        if state.alone and self._why_open:
            text += f"<br>{escape(state.blocked)} <a href='{WHY_LINK}'>Hide</a>"
        elif state.alone:
            text += f" <a href='{WHY_LINK}'>Why?</a>"
        self.note.setText(text)
        self.note.setToolTip(state.blocked)
        self.note.show()

    def _on_link(self, link: str) -> None:
        if link == WHY_LINK:
            self._why_open = not self._why_open
            self._show_blocked(self._pair_state())
