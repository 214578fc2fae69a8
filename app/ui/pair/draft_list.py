"""The Pair page's draft list: the open list says why each draft stands where it does,
and is as wide as its longest line."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.ui.pair.pair_matrix import Index

RANK_ROLE = Qt.ItemDataRole.UserRole + 1  # a fitting draft's place in the order, in words


class RankNoteDelegate(QStyledItemDelegate):
    """Draws a draft list item as its name, then why it ranks there (RANK_ROLE)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        super().initStyleOption(option, index)
        note = index.data(RANK_ROLE)
        if note:
            option.text = f"{option.text}  ·  {note}"


class DraftCombo(QComboBox):
    """A combo box whose open list is as wide as its longest line (a popup is as wide as
    the box), so each draft's reason is read whole."""

    def __init__(self) -> None:
        super().__init__()
        self.setItemDelegate(RankNoteDelegate(self))

    def showPopup(self) -> None:
        # Measured when the list opens, not each time it is filled: measuring asks the
        # delegate about every draft (240 of a 300-pack library, 4-8 ms of the GUI
        # thread at each change of target).
        view = self.view()
        room = view.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent) + 8
        view.setMinimumWidth(view.sizeHintForColumn(0) + room)
        super().showPopup()
