"""The Pair page: choose a target and a draft, see at once whether they can work."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.pack.library import Library, PackEntry
from app.core.pack.pair_table import PairTable
from app.core.pack.pairing import drafts_for, rank_note
from app.core.pack.verdict import BLOCKED
from app.core.phone.desk import PhoneDesk
from app.ui.base import background
from app.ui.base.labels import wrap_to_width
from app.ui.base.pair_selection import PairSelection
from app.ui.pair.draft_list import RANK_ROLE, DraftCombo
from app.ui.pair.pair_matrix import (
    PAIR_ROLE,
    PairMatrixModel,
    matrix_tab,
    matrix_view,
    size_columns,
)
from app.ui.pair.pair_memory import MemoryEstimate
from app.ui.pair.pair_phone import PairPhone
from app.ui.pair.verdict_card import VerdictCard

log = logging.getLogger("draftdeck.ui.pair")
TABLE_TASK = "table"  # the background reading of the library and judging of its pairs


def _listed(entry: PackEntry | None, entries: list[PackEntry]) -> bool:
    return entry is not None and any(e.path == entry.path for e in entries)


def _index_of(combo: QComboBox, entry: PackEntry | None) -> int:
    """The row holding this pack, or -1."""
    for i in range(combo.count()):
        item = combo.itemData(i)
        if entry is not None and isinstance(item, PackEntry) and item.path == entry.path:
            return i
    return -1


class PairPage(QWidget):
    def __init__(
        self,
        library: Library,
        selection: PairSelection,
        parent: QWidget | None = None,
        desk: PhoneDesk | None = None,  # the window's: an attached phone's RAM
    ) -> None:
        super().__init__(parent)
        self.library = library
        self.selection = selection
        # A pair shown here and then refused (Cancel on unsaved recipe edits): show the
        # pair still in use again, or the lists would claim a pair nobody uses.
        selection.kept.connect(self._on_pair_kept)
        self._entries: list[PackEntry] = []
        self._targets: list[PackEntry] = []
        self._drafts: list[PackEntry] = []
        self._table: PairTable | None = None  # the one shown; None before the first
        self._wanted_use: tuple[str, Path] | None = None  # use_as before it arrived

        title = QLabel("Pair")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Pick the model that writes the answer (target) and the small model that "
            "proposes tokens (draft). The pair chosen here is the one Chat, Tune and "
            "Recipes use."
        )
        hint.setObjectName("pageHint")
        wrap_to_width(hint)

        self.target_combo = QComboBox()
        self.draft_combo = DraftCombo()
        for combo in (self.target_combo, self.draft_combo):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(10)
        self.target_combo.currentIndexChanged.connect(self._on_target_changed)
        self.draft_combo.currentIndexChanged.connect(self._on_choice_changed)
        # The open list shows why each draft stands where it does; the closed box only
        # its name (the reason would be cut at 1024 px).
        self.draft_combo.setToolTip(
            "Best first, each saying why: drafts their pack recommends for this target, "
            "then compatible ones, then those with warnings; smaller drafts first. With "
            "“Show all drafts”, the others follow by name."
        )
        self.show_all = QCheckBox("Show &all drafts")
        self.show_all.setToolTip(
            "The draft list offers the drafts that can serve the chosen target, best "
            "first. Tick to list the others too, marked with why they cannot."
        )
        self.show_all.toggled.connect(self._on_show_all)
        # Said when the page ticks "Show all drafts" itself (a draft chosen that does not
        # suit the target, from the matrix or the Library): a box ticked unasked.
        self.show_all_note = QLabel()
        self.show_all_note.setObjectName("pageHint")
        wrap_to_width(self.show_all_note)
        self.show_all_note.hide()
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
        form.addWidget(self.show_all)
        form.addWidget(self.swap_button)

        self.card = VerdictCard()
        self.memory_label = MemoryEstimate()
        self.matrix_model = PairMatrixModel()
        self.matrix = matrix_view(self.matrix_model)
        self.matrix.doubleClicked.connect(self._on_matrix_double_clicked)

        # The chosen pair on a phone (the forecast) beside all installed pairs (the
        # matrix): one at a time below the card, the pair's own first.
        self.phone = PairPhone(self.memory_label, desk)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.phone, "Fo&recast on a Phone")
        self.tabs.addTab(matrix_tab(self.matrix), "All &Installed Pairs")

        # The card takes the height its words need (scrolling inside when the page is
        # short); the tabs take the rest.
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addLayout(form)
        layout.addWidget(self.show_all_note)
        layout.addWidget(self.card)
        layout.addWidget(self.memory_label)
        layout.addWidget(self.tabs, 1)

    # -- data -----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the library and judge its pairs on a worker thread (only packs and pairs
        that changed cost anything); the page keeps showing what it shows until then."""
        library, tables = self.library, self.matrix_model.tables
        if self._table is None:
            self.card.show_verdict(None, "Reading the installed packs…", "Reading the library")
        background.run(
            self,
            TABLE_TASK,
            lambda: tables.build(library.scan()),
            on_done=self._show_table,
            on_error=self._on_table_failed,
        )

    def loading(self) -> bool:
        """Whether a reading of the library is on its way to the page."""
        return background.is_running(self, TABLE_TASK)

    def refresh(self) -> None:
        """Read the library and judge its pairs now, on this thread: for `choose` before
        the page has any table (a script or a test driving the window)."""
        background.drop(self, TABLE_TASK)
        self._show_table(self.matrix_model.tables.build(self.library.scan()))

    def _on_table_failed(self, error: Exception) -> None:
        log.error("could not read the library for the Pair page", exc_info=error)
        self.card.show_verdict(None, f"{error}", "The library could not be read")

    def _show_table(self, table: PairTable) -> None:
        """Show this reading of the library and restore the saved pair, or offer the best
        pair that can run (pairing.py) when the saved one is not installed. A reading
        equal to the one shown changes nothing but the pair, if it was chosen since."""
        if self._table is not None and table.stamps == self._table.stamps:
            if self._shown_paths() != (self.selection.target, self.selection.draft):
                self._restore_pair()
            self._apply_wanted_use()
            return
        self._table = table
        self._entries = list(table.entries)
        self._targets, self._drafts = list(table.targets), list(table.drafts)
        self.matrix_model.set_table(table)
        size_columns(self.matrix, self.matrix_model)
        self._restore_pair()
        self._apply_wanted_use()

    def _restore_pair(self) -> None:
        by_path = {e.path: e for e in self._entries}
        target = by_path.get(self.selection.target) if self.selection.target else None
        draft = by_path.get(self.selection.draft) if self.selection.draft else None
        if target is None or draft is None:
            best = self._table.best if self._table is not None else None
            target, draft = best if best else (self._first_readable(), None)
        self._show_pair(target, draft)

    def _shown_paths(self) -> tuple[Path | None, Path | None]:
        target, draft = self.current()
        return (target.path if target else None, draft.path if draft else None)

    def _apply_wanted_use(self) -> None:
        if self._wanted_use is not None:
            role, path = self._wanted_use
            self._wanted_use = None
            self.use_as(role, path)

    def _first_readable(self) -> PackEntry | None:
        return next((t for t in self._targets if t.ok), self._targets[0] if self._targets else None)

    def _show_pair(self, target: PackEntry | None, draft: PackEntry | None) -> None:
        """Fill both lists for this pair (listing every draft when `draft` does not suit
        the target) and show its verdict once."""
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        for entry in self._targets:
            self._add(self.target_combo, entry, "" if entry.ok else " (cannot be read)")
        self.target_combo.setCurrentIndex(_index_of(self.target_combo, target))
        self.target_combo.blockSignals(False)
        if draft is not None and not _listed(draft, self._fitting()):
            if not self.show_all.isChecked():
                self.show_all_note.setText(
                    f"“Show all drafts” is now ticked: {self.matrix_model.label(draft)} "
                    "does not suit this target, so every draft is listed."
                )
                self.show_all_note.show()
            self.show_all.blockSignals(True)
            self.show_all.setChecked(True)
            self.show_all.blockSignals(False)
        self._fill_drafts(draft)
        self._on_choice_changed()

    def _add(self, combo: QComboBox, entry: PackEntry, suffix: str) -> None:
        combo.addItem(self.matrix_model.label(entry) + suffix, entry)
        combo.setItemData(combo.count() - 1, str(entry.path), Qt.ItemDataRole.ToolTipRole)

    def _fitting(self) -> list[PackEntry]:
        """The drafts that can serve the chosen target, best first."""
        target, _ = self.current()
        if target is None:
            return []
        return drafts_for(target, self._drafts, self.matrix_model.cell)[0]

    def _fill_drafts(self, wanted: PackEntry | None) -> None:
        """The drafts that suit the target first (best first); the others only with
        "Show all drafts", after a separator and marked. `wanted` stays chosen when
        listed, else the best draft that suits the target."""
        target, _ = self.current()
        fitting = self._fitting()
        fitting_paths = {d.path for d in fitting}
        others = [d for d in self._drafts if d.path not in fitting_paths]
        combo = self.draft_combo
        combo.blockSignals(True)
        combo.clear()
        for entry in fitting:  # each says why it stands there: the order made visible
            self._add(combo, entry, "")
            combo.setItemData(combo.count() - 1, self._rank_note(target, entry), RANK_ROLE)
        if self.show_all.isChecked() and others:
            if fitting:
                combo.insertSeparator(combo.count())
            for entry in others:
                self._add(combo, entry, self._why_not(target, entry))
        index = _index_of(combo, wanted)
        combo.setCurrentIndex(0 if index < 0 and fitting else index)
        combo.blockSignals(False)

    def _rank_note(self, target: PackEntry | None, draft: PackEntry) -> str:
        if target is None:  # no target, no fitting drafts: never asked
            return ""
        return rank_note(target, draft, self.matrix_model.cell(target, draft))

    def _why_not(self, target: PackEntry | None, draft: PackEntry) -> str:
        if not draft.ok:
            return " (cannot be read)"
        if target is not None and target.path == draft.path:
            return " (the target itself)"
        if target is not None and self.matrix_model.cell(target, draft).level == BLOCKED:
            return " (✕ blocked with this target)"
        return ""

    def current(self) -> tuple[PackEntry | None, PackEntry | None]:
        target = self.target_combo.currentData()
        draft = self.draft_combo.currentData()
        return (
            target if isinstance(target, PackEntry) else None,
            draft if isinstance(draft, PackEntry) else None,
        )

    def choose(self, target: Path, draft: Path) -> None:
        """Show this pair, listing every draft when this one does not suit the target
        (nothing changes when either is not installed in that role). Asked before the
        page has a table, it reads the library now (`refresh`)."""
        if self._table is None:
            self.refresh()
        chosen_target = next((e for e in self._targets if e.path == target), None)
        chosen_draft = next((e for e in self._drafts if e.path == draft), None)
        if chosen_target is not None and chosen_draft is not None:
            self._show_pair(chosen_target, chosen_draft)

    def use_as(self, role: str, path: Path) -> None:
        """The Library's "Use as Target/Draft": this pack as the target (keeping a draft
        that suits it, else the best that does) or as the draft of the chosen target
        (all drafts listed when it does not suit it)."""
        if self._table is None or self.loading():  # shown as soon as the reading is in
            self._wanted_use = (role, path)
            return
        target, _ = self.current()
        if role == "target":
            entry = next((e for e in self._targets if e.path == path), None)
            index = _index_of(self.target_combo, entry)
            if index >= 0:
                self.target_combo.setCurrentIndex(index)
        elif target is not None:
            self.choose(target.path, path)

    def swap(self) -> None:
        target, draft = self.current()
        if target is not None and draft is not None:
            self.choose(draft.path, target.path)

    # -- slots ----------------------------------------------------------------------------

    def _on_target_changed(self) -> None:
        """Keep the draft when it suits the new target; else offer the best that does,
        or none (unless all drafts are listed) when no draft suits it."""
        _, draft = self.current()
        fitting = self._fitting()
        if not _listed(draft, fitting):
            draft = fitting[0] if fitting else (draft if self.show_all.isChecked() else None)
        self._fill_drafts(draft)
        self._on_choice_changed()

    def _on_show_all(self) -> None:
        self.show_all_note.hide()  # the user's own tick or untick needs no note
        _, draft = self.current()
        self._fill_drafts(draft)
        self._on_choice_changed()

    def _on_choice_changed(self) -> None:
        target, draft = self.current()
        self.memory_label.show_pair(target, draft)
        self.phone.show_pair(target, draft)
        if target is None or draft is None:
            self.card.show_verdict(None, *self._missing_note(target))
            return
        self.card.show_verdict(self.matrix_model.verdict(target, draft))
        self.selection.select(target.path, draft.path)

    def _missing_note(self, target: PackEntry | None) -> tuple[str, str]:
        """What to do next, and the card's title, when no pair is chosen."""
        if not self._entries:
            return "Add a target and a draft pack on the Library page first.", "No packs yet"
        if target is None:
            return "Choose a target.", "Choose a target and a draft"
        if target.error is not None:
            return (
                f"{target.error.problem} ({target.error.path}). Fix or remove it on the "
                "Library page, or choose another target.",
                f"The target {self.matrix_model.label(target)} cannot be read",
            )
        if self._drafts and not self.show_all.isChecked():
            return (
                "No installed draft can serve this target. Tick “Show all drafts” to see "
                "the others and why they cannot, or add a draft of the same family on "
                "the Library page.",
                "No draft for this target",
            )
        return "Choose a draft, or add one on the Library page.", "Choose a draft"

    def _on_pair_kept(self) -> None:
        if self._table is not None:
            self._restore_pair()

    def _on_matrix_double_clicked(self, index: QModelIndex) -> None:
        pair = index.data(PAIR_ROLE)
        if pair:
            target, draft = pair
            self.choose(target.path, draft.path)

    def showEvent(self, event: QShowEvent) -> None:
        # The library may have changed on another page, and the phones recorded.
        self.reload()
        self.phone.reload_devices()
        super().showEvent(event)

    def shutdown(self) -> None:
        """Stop a measurement under way (the window is closing)."""
        self.phone.shutdown()
