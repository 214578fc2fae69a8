"""Every installed target against every draft, one verdict per cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from app.core.pack.compat import assess_either
from app.core.pack.library import PackEntry
from app.core.pack.pairing import distinct_names
from app.core.pack.verdict import BLOCKED, CANNOT_PAY, Verdict
from app.ui.verdict_card import STYLES

Index = QModelIndex | QPersistentModelIndex
PAIR_ROLE = Qt.ItemDataRole.UserRole + 1


def verdict_of(target: PackEntry, draft: PackEntry) -> Verdict:
    t = target.info if target.info is not None else target.error
    d = draft.info if draft.info is not None else draft.error
    assert t is not None and d is not None
    return assess_either(t, d)


def cell_text(verdict: Verdict) -> str:
    symbol = STYLES[verdict.level][0]
    if verdict.level == BLOCKED:
        return f"{symbol} blocked"
    if verdict.level == CANNOT_PAY:
        return f"{symbol} cannot pay"
    warnings = len(verdict.of("warning"))
    return (
        f"{symbol} {warnings} warning{'s' if warnings != 1 else ''}"
        if warnings
        else (f"{symbol} ok")
    )


class PairMatrixModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[PackEntry] = []
        self.drafts: list[PackEntry] = []
        self._verdicts: list[list[Verdict]] = []
        self._cells: dict[tuple[Path, Path], Verdict] = {}
        self.labels: dict[Path, str] = {}

    def set_entries(self, targets: list[PackEntry], drafts: list[PackEntry]) -> None:
        self.beginResetModel()
        self.targets, self.drafts = list(targets), list(drafts)
        self._verdicts = [[verdict_of(t, d) for d in self.drafts] for t in self.targets]
        self._cells = {
            (t.path, d.path): verdict
            for t, row in zip(self.targets, self._verdicts, strict=True)
            for d, verdict in zip(self.drafts, row, strict=True)
        }
        self.labels = distinct_names([e.path for e in (*self.targets, *self.drafts)])
        self.endResetModel()

    def verdict(self, target: PackEntry, draft: PackEntry) -> Verdict:
        """The cell's verdict, assessed once per refresh (assessed now if not a cell)."""
        found = self._cells.get((target.path, draft.path))
        return found if found is not None else verdict_of(target, draft)

    def label(self, entry: PackEntry) -> str:
        """The pack's name, with its folder when another pack has the same name."""
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
        if not (0 <= row < len(self.targets) and 0 <= column < len(self.drafts)):
            return None
        verdict = self._verdicts[row][column]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell_text(verdict)
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [f"{verdict.label}"] + [
                f"• {r.message}" for r in verdict.reasons if r.severity != "info"
            ]
            return "\n".join(lines)
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(QColor(STYLES[verdict.level][2]))
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(QColor(STYLES[verdict.level][3]))
        if role == PAIR_ROLE:
            return (self.targets[row], self.drafts[column])
        return None
