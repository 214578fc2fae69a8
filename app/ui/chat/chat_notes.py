"""The Chat page's status notes (an export, a new pair, Plain by default, adaptive
drafting's judgements) in a strip that keeps NOTE_LINES lines of room while they are
hidden: a note coming or going once pushed the toolbar and the transcript down or up by
14-48 px. A longer note still grows it rather than be cut."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

NOTE_LINES = 2  # the room kept for the status notes, shown or not


class NotesStrip(QWidget):
    def __init__(self, *notes: QLabel) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for note in notes:
            layout.addWidget(note)
        layout.addStretch(1)
        lines = NOTE_LINES * notes[0].fontMetrics().lineSpacing()
        self.setMinimumHeight(lines + (len(notes) - 1) * layout.spacing())

    def sizeHint(self) -> QSize:
        """No taller than its room: the height a note needs at the strip's width comes
        from heightForWidth. A wrapped note's own hint is its text at a narrow width
        (532 px high); the page's layout, given that hint as a note was shown, gave the
        strip half the page (34 -> 350 px) and took it back at the next layout, laying
        the transcript and the charts out and painting them anew twice a reply."""
        return QSize(super().sizeHint().width(), self.minimumHeight())
