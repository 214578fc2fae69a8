"""The Phone page's destination picker: the folder on the phone that holds packs."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QInputDialog, QLabel, QPushButton, QWidget

from app.core.infra.errors import PhoneError
from app.core.phone.desk import PhoneDesk
from app.ui.base.dialogs import show_error


class DestinationPicker(QWidget):
    """The preset and added folders; the choice is remembered in the settings."""

    changed = Signal()  # the user chose or added a folder
    message = Signal(str)

    def __init__(self, desk: PhoneDesk, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desk = desk
        self.combo = QComboBox()
        self.combo.setObjectName("destination")
        # Long folder names elide instead of widening the window.
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(16)
        self.add_button = QPushButton("Add Folder…")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Destination"))
        row.addWidget(self.combo, 1)
        row.addWidget(self.add_button)
        self.combo.currentIndexChanged.connect(self._on_index_changed)
        self.add_button.clicked.connect(self.add_destination)
        self._fill()

    def root(self) -> str:
        return str(self.combo.currentData())

    def _fill(self) -> None:
        self.combo.blockSignals(True)
        self.combo.clear()
        for dest in self.desk.destinations():
            self.combo.addItem(f"{dest.name} — {dest.root}", dest.root)
            self.combo.setItemData(self.combo.count() - 1, dest.note, Qt.ItemDataRole.ToolTipRole)
        index = self.combo.findData(self.desk.library.settings.phone_root)
        self.combo.setCurrentIndex(max(index, 0))
        self.combo.blockSignals(False)

    def add_destination(self) -> None:
        text, ok = QInputDialog.getText(
            self, "Add a destination", "Folder on the phone that holds packs:", text="/sdcard/"
        )
        if not ok:
            return
        try:
            self.desk.add_destination(text)
        except PhoneError as exc:
            show_error(self, "Not a usable folder", exc.message)
            return
        except OSError as exc:
            self.message.emit(f"Could not save settings: {exc}")
        self._fill()
        self.changed.emit()

    def _on_index_changed(self) -> None:
        try:
            self.desk.choose_destination(self.root())
        except OSError as exc:
            self.message.emit(f"Could not save settings: {exc}")
        self.changed.emit()
