"""A line edit holding a suggestion until the user makes it their own.

Make Pack fills the output folder in (`<model>-MNN`); a user who then clicked there and
typed a path got it added to the suggestion. Here a suggestion is all selected when the
field is entered, so typing replaces it, as a browser's address bar does; once the text
is not the suggestion (typed, edited, browsed to) it is the user's and stays, and an
emptied field takes suggestions again."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QLineEdit


class SuggestedEdit(QLineEdit):
    _suggestion = ""

    def suggest(self, text: str) -> None:
        """Show `text` unless the user has put text of their own there."""
        if self.is_suggested() or not self.text():
            self.setText(text)
        self._suggestion = text

    def is_suggested(self) -> bool:
        """Whether the text is the suggestion (or nothing), not the user's."""
        return self.text() == self._suggestion

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        if self.text() and self.is_suggested():
            # After the click that brought focus has placed the cursor.
            QTimer.singleShot(0, self, self._select_suggestion)

    def _select_suggestion(self) -> None:
        if self.hasFocus() and self.is_suggested():
            self.selectAll()
