"""The Chat page's mode: the Speculative/Plain combo and the line saying why it is
what it is (a pair that cannot gain on this MNN, or a pair that cannot work together,
whose target alone still chats in Plain mode)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtWidgets import QComboBox, QLabel

from app.engine.protocol import Loaded
from app.ui.base.labels import wrap_to_width
from app.ui.chat.chat_header import (
    EXACT_ROLLBACK_NOTE,
    PLAIN_DEFAULT_TIP,
    plain_default_note,
)

MODES = ("speculative", "plain")  # the combo's items, in order
WHY_LINK = "why"  # the blocked note's link to the engine's reason
BLOCKED_PAIR = "blocked_pair"  # the engine's code for a pair that cannot work together
Pair = tuple[Path | None, Path | None]
SPECULATIVE_AGAIN = (
    "Mode: Speculative again (Plain was chosen because the previous pair cannot work together)."
)


def blocked_note(plain_loaded: bool) -> str:
    if plain_loaded:
        return "This pair cannot work together: Plain mode runs the target alone."
    return "This pair cannot work together. Choose Plain to chat with the target alone."


class ModeChoice:
    def __init__(self) -> None:
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
        self._reason, self._why_open, self._plain_loaded = "", False, False  # a blocked pair's
        # The pair the mode was switched to Plain for (a replayed load keeps the choice).
        self._plain_for: Pair | None = None
        # The pair whose mode was set by a reopened conversation: its load keeps it.
        self._kept_for: Pair | None = None
        # A pair the engine refused to load together: Plain loads its target alone.
        self.blocked: Pair | None = None
        # While another pair's conversation is read: the mode the current pair had.
        self._held_over: int | None = None

    @property
    def name(self) -> str:
        return MODES[self.combo.currentIndex()]

    def target_alone(self, pair: Pair) -> bool:
        """Load this pair's target without its draft."""
        return self.blocked == pair and self.name == "plain"

    def new_pair(self, pair: Pair) -> str:
        """A pair is being loaded. Plain chosen to chat with a blocked pair's target
        does not carry over to another pair unsaid: that one gets Speculative back.
        Returns the words saying so ("" when the mode stays)."""
        words = ""
        if self.blocked not in (None, pair) and self.name == "plain":
            self.combo.setCurrentIndex(MODES.index("speculative"))
            words = SPECULATIVE_AGAIN
        self.blocked = None
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

    def refused(self, pair: Pair, message: str) -> None:
        """The engine cannot load this pair together: its words in the tooltip, and
        behind "Why?" once Plain runs the target alone (the header's go with the error)."""
        self.blocked = pair
        self._reason, self._why_open = message, False
        self._show_blocked(plain_loaded=False)
        self.note.setToolTip(message)
        self.note.show()

    def _show_blocked(self, plain_loaded: bool) -> None:
        self._plain_loaded = plain_loaded
        text = escape(blocked_note(plain_loaded))
        # Refused, the header says why under "Cannot run"; loaded alone, only this can.
        if plain_loaded and self._why_open:
            text += f"<br>{escape(self._reason)} <a href='{WHY_LINK}'>Hide</a>"
        elif plain_loaded and self._reason:
            text += f" <a href='{WHY_LINK}'>Why?</a>"
        self.note.setText(text)

    def _on_link(self, link: str) -> None:
        if link == WHY_LINK:
            self._why_open = not self._why_open
            self._show_blocked(self._plain_loaded)

    def loaded(self, event: Loaded, pair: Pair) -> None:
        """Plain decoding for a pair that cannot gain on this MNN (the engine's probe
        says so in the load event), with the reason in one line; the user may still
        pick Speculative. The next pair that can gain gets Speculative back."""
        if event.draft is None and self.blocked == pair:
            self._show_blocked(plain_loaded=True)
            return
        reason = event.cannot_pay
        if reason:
            if self._plain_for != pair and self._kept_for != pair:
                self.combo.setCurrentIndex(MODES.index("plain"))
                self._plain_for = pair
            self.note.setText(plain_default_note(reason))
            self.note.setToolTip(PLAIN_DEFAULT_TIP)
            self.note.show()
            return
        if self._plain_for is not None:
            self.combo.setCurrentIndex(MODES.index("speculative"))
            self._plain_for = None
        if event.linear_rollback:
            self.note.setText(EXACT_ROLLBACK_NOTE)
            self.note.setToolTip("")
            self.note.show()
        else:
            self.note.hide()
