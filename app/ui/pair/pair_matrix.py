"""Every installed target against every draft, one verdict per cell, and the width of
the matrix's columns."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.pair_cost import with_measured_cost
from app.core.pack.library import PackEntry
from app.core.pack.pack_names import display_names
from app.core.pack.pair_table import PairTable, PairTables
from app.core.pack.pairing import Cell, cell_of
from app.core.pack.verdict import BLOCKED, CANNOT_PAY, VERDICT_LABELS, Verdict
from app.ui.base.labels import wrap_to_width
from app.ui.pair.verdict_card import STYLES, level_colours

Index = QModelIndex | QPersistentModelIndex
PAIR_ROLE = Qt.ItemDataRole.UserRole + 1


@lru_cache(maxsize=16)
def _brushes(background: str, ink: str) -> tuple[QBrush, QBrush]:
    """Made once per colour: data() answers each cell's every role from these."""
    return QBrush(QColor(background)), QBrush(QColor(ink))


@lru_cache(maxsize=64)
def cell_text(level: str, warnings: int) -> str:
    symbol = STYLES[level][0]
    if level == BLOCKED:
        return f"{symbol} blocked"
    if level == CANNOT_PAY:
        return f"{symbol} cannot pay"
    return (
        f"{symbol} {warnings} warning{'s' if warnings != 1 else ''}"
        if warnings
        else (f"{symbol} ok")
    )


class PairMatrixModel(QAbstractTableModel):
    """A PairTable (built off the GUI thread) as a table; each cell's answer is read
    from the table's cell, never judged here (a view asks for every role of every
    cell it measures or paints)."""

    def __init__(self, tables: PairTables | None = None) -> None:
        super().__init__()
        self.tables = tables or PairTables()
        self.table = PairTable()
        self.labels: dict[Path, str] = {}

    @property
    def targets(self) -> tuple[PackEntry, ...]:
        return self.table.targets

    @property
    def drafts(self) -> tuple[PackEntry, ...]:
        return self.table.drafts

    def set_table(self, table: PairTable) -> None:
        self.beginResetModel()
        self.table = table
        self.labels = display_names(table.entries)
        self.endResetModel()

    def cell(self, target: PackEntry, draft: PackEntry) -> Cell:
        """What the table says of the pair (judged now only if it is not in the table)."""
        found = self.table.cell(target, draft)
        return found if found is not None else cell_of(self.verdict(target, draft))

    def verdict(self, target: PackEntry, draft: PackEntry) -> Verdict:
        """The pair's full verdict (for the card), judged once per pair of readings; the
        c measured when the pair ran here (Tune, bench) in its estimate's place."""
        return with_measured_cost(self.tables.verdict(target, draft), target.path, draft.path)

    def label(self, entry: PackEntry) -> str:
        """The pack's name, with where it lives when another pack has the same name."""
        return self.labels.get(entry.path, entry.name)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.targets)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.drafts)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        entries = self.drafts if orientation == Qt.Orientation.Horizontal else self.targets
        if not 0 <= section < len(entries):
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return str(entries[section].path)
        return self.label(entries[section])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        cells = self.table.cells
        if not (0 <= row < len(cells) and 0 <= column < len(cells[row])):
            return None
        cell = cells[row][column]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell_text(cell.level, cell.warnings)
        if role == Qt.ItemDataRole.ToolTipRole:
            return cell.reasons_text
        if role == Qt.ItemDataRole.BackgroundRole:
            return _brushes(*level_colours(cell.level))[0]
        if role == Qt.ItemDataRole.ForegroundRole:
            return _brushes(*level_colours(cell.level))[1]
        if role == PAIR_ROLE:
            return (self.table.targets[row], self.table.drafts[column])
        return None


class NamesHeader(QHeaderView):
    """The matrix's header: its height is one section's. Qt's measures the first and
    last hundred sections for it (800 calls into Python with 300 drafts) each time the
    model resets or the page's style changes, while every name is one line of text."""

    def sizeHint(self) -> QSize:
        if self.count() == 0:
            return super().sizeHint()
        section = self.sectionSizeFromContents(self.logicalIndex(0))
        if self.orientation() == Qt.Orientation.Horizontal:
            return QSize(self.length(), section.height())
        return QSize(section.width(), self.length())


def size_columns(matrix: QTableView, model: PairMatrixModel) -> None:
    """Each column as wide as its draft's name or the widest cell text, whichever is
    wider; rows one line high. A name's width is its text's advance plus the margins
    one section's size hint adds to its text: a size hint per section asked the
    model five roles of each name (1,500 calls into Python for 300 drafts, 10-50 ms
    of the GUI thread at once)."""
    widest = max(
        matrix.fontMetrics().horizontalAdvance(cell_text(level, warnings))
        for level in VERDICT_LABELS
        for warnings in (0, 1, 10)
    )
    padding = 2 * matrix.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 8
    header, drafts = matrix.horizontalHeader(), model.drafts
    if not drafts:
        return
    bold = header.font()  # as a section's size hint measures it (its current one is bold)
    bold.setBold(True)
    advance = QFontMetrics(bold).horizontalAdvance
    labels = [model.label(draft) for draft in drafts]
    margins = header.sectionSizeHint(0) - advance(labels[0])
    for column, label in enumerate(labels):
        header.resizeSection(column, max(advance(label) + margins, widest + padding))


def matrix_view(model: PairMatrixModel) -> QTableView:
    """The matrix's view: one cell chosen at a time, read-only."""
    view = QTableView()
    view.setHorizontalHeader(NamesHeader(Qt.Orientation.Horizontal, view))
    view.setModel(model)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    # Sized once per table from the names and the widest cell text (size_columns):
    # sized to contents, the view asked every role of all 33,600 cells of a
    # 300-pack library again on every change (a million data() calls, 9 s).
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    return view


def matrix_tab(view: QTableView) -> QWidget:
    """The Pair page's tab of all installed pairs: what the matrix is, then the matrix."""
    label = wrap_to_width(
        QLabel(
            "All installed pairs (rows: targets, columns: drafts). Hover for the reasons; "
            "double-click to choose a pair."
        )
    )
    label.setObjectName("pageHint")
    tab = QWidget()
    layout = QVBoxLayout(tab)
    layout.addWidget(label)
    layout.addWidget(view, 1)
    return tab
