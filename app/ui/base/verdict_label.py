"""The Tune page's verdict: its first sentence, the rest behind "More".

A full verdict (the best, ties, a verify limit, swept temperatures, why Apply Best is
off) ran to four lines at 1024x700 and left the results table two rows; its first
sentence says what matters (tune_results writes it so)."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from app.ui.base.labels import wrap_to_width

# A sentence ends at ". " (or "). ") before a capital letter: decimals ("2.22") and
# abbreviations in lower case ("temp. 1.2") never do.
_SENTENCE_END = re.compile(r"(?<=[.!?)])\s+(?=[A-Z“])")


def first_sentence(text: str) -> tuple[str, str]:
    """(the first sentence, the rest)."""
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (text, "")


class VerdictLabel(QWidget):
    """A label whose `text()` is the whole verdict; it shows the first sentence, with
    the whole in its tooltip and behind the More button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self.shown = wrap_to_width(QLabel())
        # A line's room even when empty: a verdict that gained its line at Start moved
        # everything under it (the form jumped). The page holds a taller one's height
        # while a run goes on (hold_height).
        self.shown.setMinimumHeight(self.shown.fontMetrics().lineSpacing())
        self.more = QPushButton("More")
        self.more.setCheckable(True)
        self.more.setFlat(True)
        self.more.hide()
        self.more.toggled.connect(self._show)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.shown, 1)
        layout.addWidget(self.more)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        self._text = text
        rest = first_sentence(text)[1]
        self.more.setVisible(bool(rest))
        self.shown.setToolTip(text if rest else "")
        self._show()

    def clear(self) -> None:
        self.setText("")

    def _show(self) -> None:
        expanded = self.more.isChecked()
        self.shown.setText(self._text if expanded else first_sentence(self._text)[0])
        self.more.setText("Less" if expanded else "More")
