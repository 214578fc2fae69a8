"""Item models for the Downloads page: the catalog and the download queue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QObject, QSortFilterProxyModel, Qt

from app.core.hub.catalog import CatalogEntry
from app.core.hub.downloads import PARTIAL
from app.core.hub.job import CANCELLED, DownloadJob, JobStatus
from app.core.infra.units import format_bytes
from app.core.infra.units import format_time_left as format_eta
from app.core.pack.library import PackEntry
from app.ui.base.job_models import FRACTION_ROLE, JobQueueModel
from app.ui.base.table_model import ColumnsModel, Index

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1


class CatalogModel(ColumnsModel):
    COLUMNS = ("Repository", "Role", "Family", "Installed", "Listed by")

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[CatalogEntry] = []
        self.installed: dict[str, str] = {}  # repo -> "installed" / "update available"
        self.readings: dict[str, PackEntry] = {}  # repo -> its installed pack, as read

    def set_readings(self, readings: Mapping[str, PackEntry]) -> None:
        """The installed packs as the Library read them (Downloads.installed_readings)."""
        self.readings = dict(readings)
        if self.entries:
            first, last = self.COLUMNS.index("Role"), self.COLUMNS.index("Family")
            self.dataChanged.emit(self.index(0, first), self.index(len(self.entries) - 1, last))

    def role_and_family(self, entry: CatalogEntry) -> tuple[str, str, str]:
        """(role, family as shown, family as filtered): an installed pack's as the Library
        shows them (read from its files), else what the catalog says of the repo (its
        name's guess, "unknown" for a target named as most are)."""
        reading = self.readings.get(entry.repo_id)
        info = reading.info if reading is not None else None
        if info is None:
            return entry.role, entry.family, entry.family
        return info.role, info.family_short, info.model_type

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
        column = self.COLUMNS[index.column()]  # valid() checked the range
        mark = self.installed.get(entry.repo_id, "")
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == "Installed" and PARTIAL in mark:  # a short word: say it whole here
                return "A partial download is on disk: Resume or Discard it in the queue"
            # The name first: the Repository column may show it elided.
            return f"{entry.repo_id}\n{entry.summary}" if entry.summary else entry.repo_id
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        pack_role, family, _ = self.role_and_family(entry)
        return {
            "Repository": entry.repo_id,
            "Role": pack_role,
            "Family": family,
            "Installed": mark,
            "Listed by": entry.source,
        }.get(column)


class CatalogFilter(QSortFilterProxyModel):
    """The catalog by a search text, a role and a family, as the rows show them."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._text, self._role, self._family = "", "", ""

    def configure(self, text: str, role: str, family: str) -> None:
        self.beginFilterChange()
        self._text, self._role, self._family = text.lower(), role, family
        self.endFilterChange()

    def filterAcceptsRow(self, row: int, parent: Index) -> bool:
        model = self.sourceModel()
        assert isinstance(model, CatalogModel)
        entry = model.entries[row]
        role, _, family = model.role_and_family(entry)
        return (
            (not self._text or self._text in f"{entry.repo_id} {entry.summary}".lower())
            and (not self._role or role == self._role)
            and (not self._family or family == self._family)
        )


class QueueModel(JobQueueModel[DownloadJob, JobStatus]):
    COLUMNS = ("Repository", "State", "Progress", "Size", "Speed", "Left", "Details")

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # A cancelled or discarded download's files are gone: no bar, no figure (a 32 %
        # bar read as something left to resume).
        progress = self.valid(index) and self.COLUMNS[index.column()] == "Progress"
        drawn = role in (FRACTION_ROLE, Qt.ItemDataRole.DisplayRole)
        if progress and drawn and self.status(index.row()).state == CANCELLED:
            return None
        return super().data(index, role)

    def cell(self, status: JobStatus, column: str) -> str:
        details = status.error
        # A cancelled download's files are gone: its last "file 3 of 7" would mislead.
        if not details and status.files_total and status.state != CANCELLED:
            details = f"file {status.files_done + 1} of {status.files_total}"
            if status.current_file:
                details += (
                    f": {status.current_file} {format_bytes(status.file_done)} / "
                    f"{format_bytes(status.file_size)}"
                )
            elif status.total_bytes:  # restored after a restart: no file is under way
                details += (
                    f", {format_bytes(status.done_bytes)} of "
                    f"{format_bytes(status.total_bytes)} arrived"
                )
        if status.path:
            details = status.path
        return {
            "Repository": status.repo_id,
            "State": status.state,
            "Size": format_bytes(status.total_bytes) if status.total_bytes else "",
            "Speed": f"{format_bytes(status.speed)}/s" if status.speed else "",
            "Left": format_eta(status.eta_seconds),
            "Details": details,
        }.get(column, "")
