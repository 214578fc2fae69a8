"""A line edit that is never narrower than its placeholder.

QLineEdit's size hint is a fixed 17 "x" wide, whatever the placeholder says: the
Library's "Filter packs (Ctrl+F)" showed as "Filter packs (Ctrl…", cutting off the key
it is there to teach."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLineEdit, QStyle, QStyleOptionFrame

TEXT_MARGIN = 2  # QLineEdit's own space on each side of its text (qlineedit_p.h)


class PlaceholderEdit(QLineEdit):
    def _placeholder_size(self) -> QSize:
        """The size whose text area holds the placeholder, from the font and style in
        effect now (a style sheet may change both after construction)."""
        margins, text = self.contentsMargins(), self.textMargins()
        width = (
            self.fontMetrics().horizontalAdvance(self.placeholderText())
            + 2 * TEXT_MARGIN
            + margins.left()
            + margins.right()
            + text.left()
            + text.right()
        )
        option = QStyleOptionFrame()
        self.initStyleOption(option)
        height = super().sizeHint().height()
        return self.style().sizeFromContents(
            QStyle.ContentsType.CT_LineEdit, option, QSize(width, height), self
        )

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(max(hint.width(), self._placeholder_size().width()), hint.height())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(max(hint.width(), self._placeholder_size().width()), hint.height())
