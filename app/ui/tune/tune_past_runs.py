"""The Tune page's past-runs bar: reopen a saved run, or draw one beside the current."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from app.core.infra.errors import FileError
from app.core.measure.tune_run import TuneRun, runs_dir
from app.ui.base.dialogs import show_file_error


class PastRuns(QWidget):
    """`opened` carries the saved run's path; `compared` the run to draw beside the
    current one (None: nothing)."""

    opened = Signal(Path)
    compared = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.past = QComboBox()
        self.open_button = QPushButton("Open")
        self.compare = QComboBox()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Past runs:"))
        layout.addWidget(self.past, 1)
        layout.addWidget(self.open_button)
        layout.addWidget(QLabel("Compare with:"))
        layout.addWidget(self.compare, 1)
        self.open_button.clicked.connect(self.open_selected)
        self.compare.currentIndexChanged.connect(self._on_compare_changed)
        self.refresh()

    def refresh(self) -> None:
        files = sorted(runs_dir().glob("*.json"), reverse=True) if runs_dir().is_dir() else []
        for combo in (self.past, self.compare):
            combo.blockSignals(True)
            combo.clear()
        self.compare.addItem("(nothing)", None)
        for path in files:
            self.past.addItem(path.stem, path)
            self.compare.addItem(path.stem, path)
        for combo in (self.past, self.compare):
            combo.blockSignals(False)
        self.open_button.setEnabled(bool(files))

    def open_selected(self) -> None:
        path = self.past.currentData()
        if isinstance(path, Path):
            self.opened.emit(path)

    def _on_compare_changed(self) -> None:
        path = self.compare.currentData()
        other = None
        if isinstance(path, Path):
            try:
                other = TuneRun.load(path)
            except FileError as exc:
                show_file_error(self, "Cannot open the run", exc)
                # The box names no run it does not draw.
                self.compare.blockSignals(True)
                self.compare.setCurrentIndex(0)
                self.compare.blockSignals(False)
        self.compared.emit(other)
