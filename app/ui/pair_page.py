"""The Pair page: choose a target and a draft, see at once whether they can work."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.ram_estimate import TIGHT, TOO_BIG, assess_memory
from app.core.pack.library import Library, PackEntry
from app.ui.pair_matrix import PAIR_ROLE, PairMatrixModel, verdict_of
from app.ui.pair_selection import PairSelection
from app.ui.verdict_card import VerdictCard

TARGET_ROLES = ("target", "either")
DRAFT_ROLES = ("draft", "either")
# (mark, colour) for the memory estimate: words and a symbol, never colour alone.
MEMORY_STYLES = {TIGHT: ("⚠ ", "#8a5300"), TOO_BIG: ("✕ ", "#a1261b")}


def _role(entry: PackEntry) -> str:
    return entry.info.role if entry.info is not None else "either"


class PairPage(QWidget):
    def __init__(
        self, library: Library, selection: PairSelection, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.library = library
        self.selection = selection
        self._entries: list[PackEntry] = []

        title = QLabel("Pair")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Pick the model that writes the answer (target) and the small model that "
            "proposes tokens (draft). The pair chosen here is the one Chat, Tune and "
            "Recipes use."
        )
        hint.setObjectName("pageHint")
        hint.setWordWrap(True)

        self.target_combo = QComboBox()
        self.draft_combo = QComboBox()
        for combo in (self.target_combo, self.draft_combo):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(10)
            combo.currentIndexChanged.connect(self._on_choice_changed)
        self.swap_button = QPushButton("Swap")
        self.swap_button.setToolTip("Use the draft as target and the target as draft")
        self.swap_button.clicked.connect(self.swap)
        form = QHBoxLayout()
        for text, combo in (("&Target:", self.target_combo), ("&Draft:", self.draft_combo)):
            label = QLabel(text)
            label.setBuddy(combo)
            form.addWidget(label)
            form.addWidget(combo, 1)
            form.addSpacing(12)
        form.addWidget(self.swap_button)

        self.card = VerdictCard()
        self.memory_label = QLabel()
        self.memory_label.setObjectName("memoryEstimate")
        self.memory_label.setWordWrap(True)
        self.memory_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.memory_label.setToolTip(
            "Estimated from the weight files, the recipes saved for this pair (memory "
            "low keeps weights as stored, normal makes MNN hold them as fp32) and a KV "
            "cache for MNN's default context of 2,048 tokens."
        )
        card_box = QWidget()
        card_layout = QVBoxLayout(card_box)
        card_layout.setContentsMargins(0, 0, 0, 0)
        card_layout.addWidget(self.card, 1)
        card_layout.addWidget(self.memory_label)

        self.matrix_model = PairMatrixModel()
        self.matrix = QTableView()
        self.matrix.setModel(self.matrix_model)
        self.matrix.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.matrix.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.matrix.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.matrix.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.matrix.doubleClicked.connect(self._on_matrix_double_clicked)
        matrix_box = QWidget()
        matrix_layout = QVBoxLayout(matrix_box)
        matrix_layout.setContentsMargins(0, 0, 0, 0)
        matrix_label = QLabel(
            "All installed pairs (rows: targets, columns: drafts). Hover for the reasons; "
            "double-click to choose a pair."
        )
        matrix_label.setObjectName("pageHint")
        matrix_label.setWordWrap(True)
        matrix_layout.addWidget(matrix_label)
        matrix_layout.addWidget(self.matrix)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(card_box)
        splitter.addWidget(matrix_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addLayout(form)
        layout.addWidget(splitter, 1)

    # -- data -----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the library and restore the saved pair."""
        self._entries = self.library.scan()
        targets = [e for e in self._entries if _role(e) in TARGET_ROLES]
        drafts = [e for e in self._entries if _role(e) in DRAFT_ROLES]
        self._fill(self.target_combo, targets, self.selection.target)
        self._fill(self.draft_combo, drafts, self.selection.draft)
        self.matrix_model.set_entries(targets, drafts)
        self._on_choice_changed()

    def _fill(self, combo: QComboBox, entries: list[PackEntry], wanted: Path | None) -> None:
        combo.blockSignals(True)
        combo.clear()
        for entry in entries:
            label = entry.name if entry.ok else f"{entry.name} (cannot be read)"
            combo.addItem(label, entry)
            combo.setItemData(combo.count() - 1, str(entry.path), Qt.ItemDataRole.ToolTipRole)
        paths = [e.path for e in entries]
        if wanted in paths:
            combo.setCurrentIndex(paths.index(wanted))
        combo.blockSignals(False)

    def current(self) -> tuple[PackEntry | None, PackEntry | None]:
        target = self.target_combo.currentData()
        draft = self.draft_combo.currentData()
        return (
            target if isinstance(target, PackEntry) else None,
            draft if isinstance(draft, PackEntry) else None,
        )

    def choose(self, target: Path, draft: Path) -> None:
        for combo, path in ((self.target_combo, target), (self.draft_combo, draft)):
            for i in range(combo.count()):
                entry = combo.itemData(i)
                if isinstance(entry, PackEntry) and entry.path == path:
                    combo.setCurrentIndex(i)

    def swap(self) -> None:
        target, draft = self.current()
        if target is not None and draft is not None:
            self.choose(draft.path, target.path)

    # -- slots ----------------------------------------------------------------------------

    def _on_choice_changed(self) -> None:
        target, draft = self.current()
        self._show_memory(target, draft)
        if target is None or draft is None:
            missing = "a target" if target is None else "a draft"
            self.card.show_verdict(
                None,
                f"Add {missing} pack on the Library page first."
                if not self._entries
                else f"Choose {missing}.",
            )
            return
        self.card.show_verdict(verdict_of(target, draft))
        self.selection.select(target.path, draft.path)

    def _show_memory(self, target: PackEntry | None, draft: PackEntry | None) -> None:
        """How much memory the pair needs under its saved recipes, and whether this
        computer has it now (refused by the engine when it does not)."""
        if target is None or draft is None or target.info is None or draft.info is None:
            self.memory_label.hide()
            return
        _, fit = assess_memory(target.info, draft.info, worker_running=False)
        mark, colour = MEMORY_STYLES.get(fit.level, ("", ""))
        self.memory_label.setText(mark + fit.message)
        self.memory_label.setStyleSheet(f"color: {colour};" if colour else "")
        self.memory_label.setProperty("level", fit.level)
        self.memory_label.show()

    def _on_matrix_double_clicked(self, index: QModelIndex) -> None:
        pair = index.data(PAIR_ROLE)
        if pair:
            target, draft = pair
            self.choose(target.path, draft.path)

    def showEvent(self, event: QShowEvent) -> None:
        # The library may have changed on another page.
        self.refresh()
        super().showEvent(event)
