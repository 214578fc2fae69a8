"""Rows of background jobs (downloads, pushes) with a progress-bar column."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
    QTableView,
)

from app.core.infra.job_queue import JobProgress, TrackedJob
from app.ui.base.table_model import ColumnsModel, Index

FRACTION_ROLE = Qt.ItemDataRole.UserRole + 2


S = TypeVar("S", bound=JobProgress)
J = TypeVar("J", bound=TrackedJob[Any])


class JobQueueModel(ColumnsModel, Generic[J, S]):
    """One row per job; `refresh()` re-reads the jobs and updates changed rows only,
    `sync()` also follows the queue's list. Subclasses say what each column shows in
    `cell`."""

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[J] = []
        self._shown: list[S] = []
        self._followed: J | None = None  # the job whose row `follow` selected last

    @abstractmethod
    def cell(self, status: S, column: str) -> str:
        """What `column` shows for a job in this state (Progress is drawn here)."""

    def tooltip(self, status: S, column: str) -> str:
        """What hovering a cell says (the error, whichever the column)."""
        return status.error

    def add_job(self, job: J) -> None:
        if job in self.jobs:
            return
        row = len(self.jobs)
        self.beginInsertRows(QModelIndex(), row, row)
        self.jobs.append(job)
        self._shown.append(job.status())
        self.endInsertRows()

    def remove_rows_where(self, finished: set[str]) -> list[J]:
        """Remove the rows shown in one of these states; their jobs."""
        removed = []
        for row in reversed(range(len(self.jobs))):
            if self._shown[row].state in finished:
                self.beginRemoveRows(QModelIndex(), row, row)
                removed.append(self.jobs[row])
                del self.jobs[row], self._shown[row]
                self.endRemoveRows()
        return removed

    def refresh(self) -> list[S]:
        """Statuses that changed since the last refresh (for the caller's reactions)."""
        changed = []
        for row, job in enumerate(self.jobs):
            status = job.status()
            if status != self._shown[row]:
                self._shown[row] = status
                changed.append(status)
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))
        return changed

    def sync(self, jobs: Iterable[J]) -> list[S]:
        """Show exactly `jobs`, in their order of arrival: rows of jobs no longer listed
        go, new jobs get a row. Statuses that changed or are new (for the caller's
        reactions), each reported once."""
        wanted = list(jobs)
        for row in reversed(range(len(self.jobs))):
            if self.jobs[row] not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.jobs[row], self._shown[row]
                self.endRemoveRows()
        changed = self.refresh()
        for job in wanted:
            if job not in self.jobs:
                self.add_job(job)
                changed.append(self._shown[-1])
        return changed

    def status(self, row: int) -> S:
        return self._shown[row]

    def all_shown_in(self, states: Iterable[str]) -> bool:
        """Whether every row, as last shown, is in one of these states (a job finishing
        after its row was read is shown, and counted, by the next refresh)."""
        wanted = set(states)
        return all(status.state in wanted for status in self._shown)

    def follow(self, view: QTableView, job: J) -> None:
        """Select the row of the job a user just started, so that its buttons apply at
        once, unless the user chose another row (a row selected here earlier was not
        their choice: the selection moves on to the newest job)."""
        selected = self.selected_job(view)
        if job in self.jobs and (selected is None or selected is self._followed):
            self._followed = job
            view.selectRow(self.jobs.index(job))

    def selected_job(self, view: QAbstractItemView) -> J | None:
        rows = view.selectionModel().selectedRows()
        return self.jobs[rows[0].row()] if rows else None

    def selected_status(self, view: QAbstractItemView) -> S | None:
        """The selected row's job as last shown (what its buttons may offer)."""
        rows = view.selectionModel().selectedRows()
        return self._shown[rows[0].row()] if rows else None

    def row_total(self) -> int:
        return len(self.jobs)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        status = self._shown[index.row()]
        column = self.COLUMNS[index.column()]
        if role == FRACTION_ROLE:
            return status.fraction
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(status, column) or None
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if column == "Progress":
            return f"{status.fraction:.0%}"
        return self.cell(status, column)


def offer(button: QAbstractButton, why_not: str, what: str) -> None:
    """Enable `button` when nothing stands in the way (`why_not` empty); its tooltip says
    what it does, or why it cannot now."""
    button.setEnabled(not why_not)
    button.setToolTip(why_not or what)


class ProgressDelegate(QStyledItemDelegate):
    """Draws the Progress column as a progress bar with its percentage."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        fraction = index.data(FRACTION_ROLE)
        if not isinstance(fraction, float):
            super().paint(painter, option, index)
            return
        bar = QStyleOptionProgressBar()
        bar.rect = QRect(option.rect.adjusted(2, 3, -2, -3))
        bar.minimum, bar.maximum = 0, 1000
        bar.progress = int(fraction * 1000)
        bar.textVisible = False
        QApplication.style().drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)
        # The percentage on a plate of the view's background: a style's own bar text sits
        # half on the filled chunk in one colour ("32%" read "■2%").
        text = f"{fraction:.0%}"
        metrics = option.fontMetrics
        plate = QRect(0, 0, metrics.horizontalAdvance(text) + 4, metrics.height())
        plate.moveCenter(bar.rect.center())
        painter.save()
        painter.fillRect(plate, option.palette.base())
        painter.setPen(option.palette.text().color())
        painter.drawText(plate, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
