"""Item models for the Downloads page: the catalog and the download queue."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
)

from app.core.hub.catalog import CatalogEntry
from app.core.hub.job import DownloadJob, JobStatus
from app.core.units import format_bytes
from app.ui.table_model import ColumnsModel, Index

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
FRACTION_ROLE = Qt.ItemDataRole.UserRole + 2


class CatalogModel(ColumnsModel):
    COLUMNS = ("Repository", "Role", "Family", "Installed", "Listed by")

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[CatalogEntry] = []
        self.installed: dict[str, str] = {}  # repo -> "installed" / "update available"

    def set_entries(self, entries: list[CatalogEntry]) -> None:
        self.beginResetModel()
        self.entries = list(entries)
        self.endResetModel()

    def set_installed(self, installed: dict[str, str]) -> None:
        self.installed = dict(installed)
        if self.entries:
            column = self.COLUMNS.index("Installed")
            self.dataChanged.emit(self.index(0, column), self.index(len(self.entries) - 1, column))

    def row_total(self) -> int:
        return len(self.entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        entry = self.entries[index.row()]
        if role == ENTRY_ROLE:
            return entry
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.summary or entry.repo_id
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        column = self.COLUMNS[index.column()] if 0 <= index.column() < len(self.COLUMNS) else ""
        return {
            "Repository": entry.repo_id,
            "Role": entry.role,
            "Family": entry.family,
            "Installed": self.installed.get(entry.repo_id, ""),
            "Listed by": entry.source,
        }.get(column)


def _eta(status: JobStatus) -> str:
    seconds = status.eta_seconds
    if seconds is None:
        return ""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class QueueModel(ColumnsModel):
    """One row per download; `refresh()` re-reads the jobs and updates changed rows only."""

    COLUMNS = ("Repository", "State", "Progress", "Size", "Speed", "Left", "Details")

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[DownloadJob] = []
        self._shown: list[JobStatus] = []

    def add_job(self, job: DownloadJob) -> None:
        if job in self.jobs:
            return
        row = len(self.jobs)
        self.beginInsertRows(QModelIndex(), row, row)
        self.jobs.append(job)
        self._shown.append(job.status())
        self.endInsertRows()

    def remove_rows_where(self, finished: set[str]) -> None:
        for row in reversed(range(len(self.jobs))):
            if self._shown[row].state in finished:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.jobs[row], self._shown[row]
                self.endRemoveRows()

    def refresh(self) -> list[JobStatus]:
        """Statuses that changed since the last refresh (for the caller's reactions)."""
        changed = []
        for row, job in enumerate(self.jobs):
            status = job.status()
            if status != self._shown[row]:
                self._shown[row] = status
                changed.append(status)
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))
        return changed

    def status(self, row: int) -> JobStatus:
        return self._shown[row]

    def row_total(self) -> int:
        return len(self.jobs)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        status = self._shown[index.row()]
        column = self.COLUMNS[index.column()]
        if role == FRACTION_ROLE:
            return status.fraction
        if role == Qt.ItemDataRole.ToolTipRole and status.error:
            return status.error
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if column == "Progress":
            return f"{status.fraction:.0%}"
        details = status.error
        if not details and status.files_total:
            details = f"file {status.files_done + 1} of {status.files_total}"
            if status.current_file:
                details += (
                    f": {status.current_file} {format_bytes(status.file_done)} / "
                    f"{format_bytes(status.file_size)}"
                )
        if status.path:
            details = status.path
        return {
            "Repository": status.repo_id,
            "State": status.state,
            "Size": format_bytes(status.total_bytes) if status.total_bytes else "",
            "Speed": f"{format_bytes(status.speed)}/s" if status.speed else "",
            "Left": _eta(status),
            "Details": details,
        }.get(column)


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
        bar.text = f"{fraction:.0%}"
        bar.textVisible = True
        QApplication.style().drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)
