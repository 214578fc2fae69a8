"""A repo's download plan as a table: one row per file, the files fetched and then the
ones skipped (with why).

A Hub repo may list 100,000 files. The rows are the plan's own tuples (sorted by path
where the plan was built, off the GUI thread); a cell's text is made only when a view
asks for it, so showing a plan costs the same for 10 files or 100,000. No sorting by
column: sorting 100,000 rows in Python would hold the GUI thread far longer than a
frame."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from app.core.hub.plan import PlanFile, RepoPlan, skip_reason
from app.core.infra.units import format_bytes
from app.ui.base.table_model import ColumnsModel, Index

FILE_ROLE = Qt.ItemDataRole.UserRole + 1  # the row's PlanFile


class PlanModel(ColumnsModel):
    COLUMNS = ("File", "Size", "Checked by", "Note")

    def __init__(self) -> None:
        super().__init__()
        self.plan: RepoPlan | None = None
        self._fetched = 0  # rows below this are fetched, the rest skipped
        self._rows: tuple[PlanFile, ...] = ()
        self._include_all = False

    def set_plan(self, plan: RepoPlan | None, include_all: bool = False) -> None:
        self.beginResetModel()
        self.plan, self._include_all = plan, include_all
        self._rows = (plan.files + plan.skipped) if plan is not None else ()
        self._fetched = len(plan.files) if plan is not None else 0
        self.endResetModel()

    def row_total(self) -> int:
        return len(self._rows)

    def fetched(self, row: int) -> bool:
        return row < self._fetched

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        row = index.row()
        file = self._rows[row]
        column = self.COLUMNS[index.column()]
        if role == FILE_ROLE:
            return file
        if role == Qt.ItemDataRole.TextAlignmentRole and column == "Size":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == "File":
            return file.path  # the column may show it elided
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if column == "File":
            return file.path
        if column == "Size":
            return format_bytes(file.size)
        if column == "Checked by":
            return "LFS sha256" if file.lfs else "git blob"
        if self.fetched(row):
            return ""
        return f"skipped: {skip_reason(file.path, self._include_all) or 'not needed'}"
