"""The Phone page's recorded results: what the selected phone (by its adb model name) gave
in TokForge, each with how far DraftDeck's forecast made just before was off; record a
result, delete one (with Undo). The phones with results stay listed when none is attached.
What to show is results_state.py's; files are read and written off the GUI thread."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import UsageError
from app.core.measure.phone_results import PhoneResult, delete_result
from app.core.phone.devices import DeviceInfo
from app.ui.base import background
from app.ui.base.dialogs import show_error
from app.ui.base.labels import wrap_to_width
from app.ui.base.phone_profile import phone_draft_length
from app.ui.base.table_model import ColumnsModel, Index, setup_table
from app.ui.phone.phone_watch import PhoneWatch
from app.ui.phone.record_result_dialog import RecordResultDialog
from app.ui.phone.results_state import (
    COLUMNS,
    cells,
    forecast_tip,
    put_back,
    record,
    shown_results,
)

LIST_TASK, CHANGE_TASK = "results", "change"
EMPTY = (
    "No results recorded for this phone yet. After a run in TokForge, Record a Result: the "
    "forecasts for this phone then start from its own figures."
)


class ResultsModel(ColumnsModel):
    COLUMNS = COLUMNS

    def __init__(self) -> None:
        super().__init__()
        self.results: list[PhoneResult] = []

    def row_total(self) -> int:
        return len(self.results)

    def set_results(self, results: Sequence[PhoneResult]) -> None:
        self.beginResetModel()
        self.results = list(results)
        self.endResetModel()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        result = self.results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cells(result)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            if COLUMNS[index.column()] == COLUMNS[-1]:
                return forecast_tip(result)
            return f"{result.target.path}\n{result.draft.path}"
        return None


class PhoneResultsPanel(QWidget):
    message = Signal(str)

    def __init__(self, watch: PhoneWatch, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.watch = watch  # the library's packs and the attached phones
        self.attached: DeviceInfo | None = None
        self.deleted: PhoneResult | None = None  # the last one deleted, for Undo
        title = QLabel("Recorded res&ults on")
        self.phone = QComboBox()
        self.phone.setObjectName("resultsPhone")
        self.phone.setToolTip("The phone whose results are listed (its model name)")
        self.phone.setMinimumContentsLength(14)
        self.phone.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.phone.activated.connect(lambda _i: self.reload())
        title.setBuddy(self.phone)  # Alt+U
        self.record_button = QPushButton("Record a Result…")
        self.record_button.setToolTip(
            "Enter the plain and speculative tok/s and the draft length TokForge showed "
            "after a run on this phone"
        )
        self.record_button.clicked.connect(self.open_record)
        self.delete_button = QPushButton("Delete Result")
        self.delete_button.clicked.connect(self.delete_selected)
        self.undo_button = QPushButton("Undo Delete")
        self.undo_button.clicked.connect(self.undo_delete)
        self.undo_button.hide()
        self.note = wrap_to_width(QLabel())
        self.note.setObjectName("pageHint")
        self.model = ResultsModel()
        self.view = QTableView()
        self.view.setObjectName("phoneResults")
        self.view.setModel(self.model)
        setup_table(self.view)
        # Three results in view at the smallest window: the splitter takes the room
        # from the panes above, whose lists are short.
        rows = 3 * self.view.verticalHeader().defaultSectionSize()
        header = self.view.horizontalHeader().sizeHint().height()
        self.view.setMinimumHeight(rows + header + 2 * self.view.frameWidth())
        self.view.selectionModel().selectionChanged.connect(self._update_buttons)

        head = QHBoxLayout()
        head.addWidget(title)
        head.addWidget(self.phone, 1)
        # The buttons under the table: the panel sits beside the push queue, and a row
        # of three buttons beside the chooser made the page wider than 1024 pixels.
        buttons = QHBoxLayout()
        for button in (self.record_button, self.delete_button, self.undo_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self.show_device(None)

    # -- which phone --------------------------------------------------------------------

    def current_phone(self) -> str | None:
        return self.phone.currentText() or None

    def show_device(self, device: DeviceInfo | None) -> None:
        """Follow the phone selected on the page (None: keep the one shown)."""
        self.attached = device if device is not None and device.model else None
        self._list(self.attached.model if self.attached is not None else self.current_phone())

    def reload(self) -> None:
        self._list(self.current_phone())

    def showEvent(self, event: QShowEvent) -> None:
        self.reload()  # results recorded since (`draftdeck forecast`, another window)
        super().showEvent(event)

    def _list(self, wanted: str | None) -> None:
        """Read the phones with results and `wanted`'s results, then show them."""
        attached = self.attached.model if self.attached is not None else None
        background.run(
            self,
            LIST_TASK,
            lambda: shown_results(attached, wanted),
            lambda found: self._show(*found),
        )

    def _show(self, names: list[str], wanted: str | None, results: list[PhoneResult]) -> None:
        self.phone.clear()
        self.phone.addItems(names)
        self.phone.setCurrentIndex(names.index(wanted) if wanted in names else -1)
        self.model.set_results(results)
        shown = self.current_phone()
        if shown is None:
            self.note.setText(
                "No phone selected and none has results: attach one, or Record a Result "
                "and name the phone."
            )
        else:
            self.note.setText("" if self.model.results else EMPTY)
        self.note.setVisible(bool(self.note.text()))
        self._update_buttons()

    # -- changes ------------------------------------------------------------------------

    def selected(self) -> PhoneResult | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.results[rows[0].row()] if rows else None

    def _update_buttons(self) -> None:
        self.delete_button.setEnabled(self.selected() is not None)

    def open_record(self) -> RecordResultDialog:
        """The Record dialog for the phone shown, the pair chosen in the window."""
        settings = self.watch.desk.library.settings
        target = Path(settings.pair_target) if settings.pair_target else None
        draft = Path(settings.pair_draft) if settings.pair_draft else None
        attached = self.attached
        phone = self.current_phone() or (attached.model if attached else "")
        ram = attached.ram_bytes if attached is not None and attached.model == phone else 0
        length = phone_draft_length(target) if target is not None else None
        dialog = RecordResultDialog(phone, self.watch.packs, (target, draft), length, ram, self)
        dialog.accepted.connect(lambda: self._record(dialog))
        dialog.open()
        return dialog

    def _record(self, dialog: RecordResultDialog) -> None:
        new = dialog.new_result()
        background.run(self, CHANGE_TASK, lambda: record(new), self._on_recorded, self._on_failed)

    def _on_recorded(self, result: PhoneResult) -> None:
        self.undo_button.hide()
        self.message.emit(
            f"Recorded {result.plain_tok_s:.1f} → {result.spec_tok_s:.1f} tok/s at d = "
            f"{result.draft_length} on {result.phone}"
        )
        self._list(result.phone)

    def delete_selected(self) -> None:
        result = self.selected()
        if result is None:
            return
        background.run(
            self,
            CHANGE_TASK,
            lambda: delete_result(result.id),
            self._on_deleted,
            self._on_failed,
        )

    def _on_deleted(self, result: PhoneResult | None) -> None:
        self.deleted = result
        self.undo_button.setVisible(result is not None)
        if result is not None:
            self.message.emit(
                f"Deleted the result of {result.date[:10]} on {result.phone} (Undo Delete "
                "puts it back)"
            )
        self.reload()

    def undo_delete(self) -> None:
        result, self.deleted = self.deleted, None
        self.undo_button.hide()
        if result is not None:
            background.run(
                self, CHANGE_TASK, lambda: put_back(result), self._on_put_back, self._on_failed
            )

    def _on_put_back(self, result: PhoneResult) -> None:
        self.message.emit(f"Put the result of {result.date[:10]} back")
        self._list(result.phone)

    def _on_failed(self, error: Exception) -> None:
        words = error.message if isinstance(error, UsageError) else str(error)
        show_error(self, "Phone results", words)

    def row_of(self, result_id: str) -> QModelIndex:
        for row, result in enumerate(self.model.results):
            if result.id == result_id:
                return self.model.index(row, 0)
        return QModelIndex()
