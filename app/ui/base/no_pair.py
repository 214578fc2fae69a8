"""What a page that works on the chosen pair shows before there is one: what to do, and
a button to the Pair page, in place of fields and charts that would mean nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from app.ui.base.labels import wrap_to_width
from app.ui.base.pair_selection import PairSelection


def no_pair_words(purpose: str) -> str:
    return f"No pair chosen yet. Choose a target and a draft on the Pair page {purpose}."


class NeedsPair(QStackedWidget):
    """`content` once the selection holds a target and a draft; till then, the words
    and a "Go to Pair" button (its click is `go_to_pair`: the window shows the page)."""

    go_to_pair = Signal()

    def __init__(
        self,
        selection: PairSelection,
        content: QWidget,
        purpose: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.selection = selection
        self.content = content
        self.message = wrap_to_width(QLabel(no_pair_words(purpose)))
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.button = QPushButton("Go to Pair")
        self.button.clicked.connect(self.go_to_pair)
        notice = QWidget()
        layout = QVBoxLayout(notice)
        layout.addStretch(1)
        layout.addWidget(self.message)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
        self.notice = notice
        self.addWidget(notice)
        self.addWidget(content)
        selection.changed.connect(self.refresh)
        self.refresh()

    @property
    def has_pair(self) -> bool:
        return self.selection.target is not None and self.selection.draft is not None

    def refresh(self) -> None:
        self.setCurrentWidget(self.content if self.has_pair else self.notice)
