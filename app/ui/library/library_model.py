"""The installed packs as a table model (one row per pack)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

from app.core.infra.units import format_bytes
from app.core.pack.export_check import ExportVerdict
from app.core.pack.library import PackEntry
from app.core.pack.pack_names import display_names
from app.ui.base.fitted_table import READABLE_ROLE
from app.ui.base.scheme import colours
from app.ui.base.table_model import ColumnsModel, Index

COLUMNS = (
    "Name",
    "Role",
    "Family",
    "Attention",
    "Vocab",
    "Quantization",
    "Size",
    "Status",
    "Path",
)
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
# A readable pack's status by its export check (None: never checked).
_CHECKED_STATUS = {
    None: "OK",
    ExportVerdict.VERIFIED: "OK, export verified",
    ExportVerdict.NOT_VERIFIED: "Export not verified",
    ExportVerdict.UNREADABLE: "OK; export check unreadable",
}
_ANSWERED = frozenset(
    (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.ForegroundRole,
        ENTRY_ROLE,
        SORT_ROLE,
        READABLE_ROLE,
    )
)


def _cells(entry: PackEntry, name: str) -> tuple[tuple[str, Any], ...]:
    """(display text, sort key) per column; `name` as every list shows it (pack_names)."""
    info = entry.info
    check = entry.export_check
    status = (
        _CHECKED_STATUS[check.verdict if check else None] if entry.ok else f"Error: {entry.status}"
    )
    if info is None:
        blank = ("—", "")
        return (
            (name, name.lower()),
            blank,
            blank,
            blank,
            blank,
            blank,
            blank,
            (status, status),
            (str(entry.path), str(entry.path)),
        )
    attention = info.attention + (" (linear)" if info.linear_attention else "")
    quant = (
        f"{info.quant_bits}-bit" + (f" / {info.quant_block}" if info.quant_block else "")
        if info.quant_bits
        else "—"
    )
    vocab = f"{info.vocab_size:,}" if info.vocab_size is not None else "unknown"
    return (
        (name, name.lower()),
        (info.role, info.role),
        (info.family_short, info.model_type),
        (attention, attention),
        (vocab, info.vocab_size or 0),
        (quant, info.quant_bits or 0),
        (format_bytes(info.size_bytes), info.size_bytes),
        (status, status),
        (str(entry.path) + ("  (linked)" if entry.by_reference else ""), str(entry.path)),
    )


def _readable(entry: PackEntry, column: str, text: str) -> str | None:
    """What must stay readable when the column narrows: a path's pack folder (it is
    elided at the start) and a status up to the file it is about (elided at the end)."""
    if column == "Path":
        return f"…{os.sep}{text[len(str(entry.path.parent)) + 1 :]}"
    if column == "Status" and entry.error is not None:
        name = entry.error.path.name
        end = text.find(name) + len(name) if name in text else len("Error: ") + len(name)
        return text[:end] + "…" if end < len(text) else text
    return None


def _tooltip(entry: PackEntry, column: str, text: str) -> str:
    """The whole error on hover, except over Path: there the whole path. Over a readable
    pack's Status, what its export check found."""
    if entry.error is not None:
        return str(entry.path) if column == "Path" else str(entry.error)
    if column == "Status" and entry.export_check is not None:
        return entry.export_check.words()
    return text


class LibraryModel(ColumnsModel):
    COLUMNS = COLUMNS

    def __init__(self) -> None:
        super().__init__()
        self._entries: list[PackEntry] = []
        # Each row's cells, worked out when first asked: the view asks every role of
        # every cell it measures, and working out one cell's text made all nine.
        self._cells: list[tuple[tuple[str, Any], ...] | None] = []
        self._names: dict[Path, str] = {}
        self._order: tuple[int, Qt.SortOrder] | None = None  # (column, order) sorted by

    def set_entries(self, entries: list[PackEntry]) -> None:
        self.beginResetModel()
        self._entries = list(entries)
        self._cells = [None] * len(self._entries)
        self._names = display_names(self._entries)
        if self._order is not None:
            self._sort_rows(*self._order)
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Rows by the column's SORT_ROLE key. Sorted here, in one Python sort, not by a
        proxy: a QSortFilterProxyModel asks the model for each row's key about ten times
        (3,000 calls into Python for 300 packs, at every change of rows)."""
        self._order = (column, order)
        if not 0 <= column < len(COLUMNS):
            return
        self.layoutAboutToBeChanged.emit()
        before = list(self._entries)
        self._sort_rows(column, order)
        moved_to = {id(entry): row for row, entry in enumerate(self._entries)}
        persistent = self.persistentIndexList()
        self.changePersistentIndexList(
            persistent,
            [self.index(moved_to[id(before[i.row()])], i.column()) for i in persistent],
        )
        self.layoutChanged.emit()

    def _sort_rows(self, column: int, order: Qt.SortOrder) -> None:
        cells = [self._row_cells(row) for row in range(len(self._entries))]
        # Blank keys ("" for a pack that cannot be read) before numbers, as 0 would be.
        rows = sorted(
            range(len(cells)),
            key=lambda row: (not isinstance(cells[row][column][1], str), cells[row][column][1]),
            reverse=order == Qt.SortOrder.DescendingOrder,
        )
        self._entries = [self._entries[row] for row in rows]
        self._cells = [cells[row] for row in rows]

    def add_entries(self, entries: list[PackEntry]) -> None:
        """New rows in the order the table is sorted by (appended, they would sit at the
        bottom under the sort arrow until the next reading). A reset: a new pack can
        also change the label of the one it shares its name with."""
        self.set_entries(self._entries + entries)

    def remove_entry(self, entry: PackEntry) -> None:
        """Drop a row; a reset, as the pack that shared its name gets its plain name back."""
        self.set_entries([e for e in self._entries if e is not entry])

    def entries(self) -> list[PackEntry]:
        return list(self._entries)

    def _row_cells(self, row: int) -> tuple[tuple[str, Any], ...]:
        cells = self._cells[row]
        if cells is None:
            entry = self._entries[row]
            cells = self._cells[row] = _cells(entry, self._names.get(entry.path, entry.name))
        return cells

    def row_total(self) -> int:
        return len(self._entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Every other role is refused first: a view asks a dozen of each cell it measures
        # or paints, and the proxy's sort asks SORT_ROLE of rows about ten times each
        # (3,000 calls for 300 packs, in one turn of the GUI thread).
        if role not in _ANSWERED or not self.valid(index):
            return None
        if role == SORT_ROLE:
            return self._row_cells(index.row())[index.column()][1]
        entry = self._entries[index.row()]
        column = index.column()
        if role == ENTRY_ROLE:
            return entry
        text, _ = self._row_cells(index.row())[column]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if role == Qt.ItemDataRole.ToolTipRole:
                return _tooltip(entry, COLUMNS[column], text)
            return text
        if role == READABLE_ROLE:
            return _readable(entry, COLUMNS[column], text)
        if role == Qt.ItemDataRole.ForegroundRole and COLUMNS[column] == "Status":
            # Read at each paint: the colour follows the scheme.
            return (
                QBrush(QColor(colours().error)) if not entry.ok or entry.export_doubtful else None
            )
        return None
