"""The Chat page's message box: Enter (or Ctrl+Enter, by choice) sends, Shift+Enter
starts a new line."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QPlainTextEdit, QWidget

SEND_KEYS = ("Enter sends", "Ctrl+Enter sends")


class MessageInput(QPlainTextEdit):
    send_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Write a message…")
        self.setMaximumHeight(110)
        self.send_keys = QComboBox()
        self.send_keys.addItems(SEND_KEYS)
        self.send_keys.setToolTip("With Enter sends, Shift+Enter starts a new line")
        self.send_keys.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.send_keys.setMinimumContentsLength(12)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            enter_sends = self.send_keys.currentIndex() == 0
            if (enter_sends and not shift and not ctrl) or (not enter_sends and ctrl):
                self.send_requested.emit()
                return
        super().keyPressEvent(event)
