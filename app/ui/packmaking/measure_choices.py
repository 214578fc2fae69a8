"""The Measure Pack dialog's choices: the draft (one of the Library's drafts), the targets
it may be measured against (each with what the pairing rules say), and the method.

A target the rules refuse (a blocked pair, one that does not fit in memory) is listed
unticked and disabled, with why: the engine would refuse it too. One where speculation
cannot pay on this MNN may be ticked: it is then recorded as disabled, with why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QRadioButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.load_plan import Refusal, plan_load
from app.core.measure.ram_estimate import TIGHT
from app.core.pack.library import PackEntry
from app.core.pack.pack_names import display_names
from app.core.pack.pairing import DRAFT_ROLES, TARGET_ROLES, role_of
from app.core.packmaking.writing import foreign_files
from app.ui.base.labels import wrap_to_width

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
NAME, PAIRING, PROGRESS = range(3)
MAX_REASONS = 3  # refusal lines shown under the list, at most


@dataclass(frozen=True)
class TargetChoice:
    path: Path
    name: str
    words: str  # what the pairing rules say, in one line
    details: str = ""  # every reason, for the tooltip
    refusal: str = ""  # why it cannot be measured ("" when it can)
    ticked: bool = True  # ticked at first


@dataclass(frozen=True)
class DraftLook:
    """What the dialog shows for one draft: its targets and the files it may not replace."""

    draft: Path
    targets: tuple[TargetChoice, ...]
    foreign: tuple[Path, ...]  # runtime_config.json / README.md DraftDeck did not write


def drafts_in(entries: list[PackEntry]) -> list[PackEntry]:
    return [e for e in entries if e.ok and role_of(e) in DRAFT_ROLES]


def _choice(target: PackEntry, draft: PackEntry, name: str) -> TargetChoice:
    assert target.info is not None and draft.info is not None
    plan = plan_load(target.info, draft.info)
    if isinstance(plan, Refusal):
        return TargetChoice(target.path, name, plan.message, plan.message, plan.message)
    verdict = plan.verdict
    assert verdict is not None
    details = verdict.summary() if verdict.reasons else ""
    if verdict.cannot_pay:
        words = "Speculation cannot pay on this MNN: recorded as disabled, with why"
        return TargetChoice(target.path, name, words, details, ticked=False)
    words = verdict.label
    if plan.fit.level == TIGHT:
        words += f"; {plan.fit.message}"
    return TargetChoice(target.path, name, words, details)


def look_at(entries: list[PackEntry], draft: PackEntry) -> DraftLook:
    """The draft's target choices (every other pack that can be a target) and its
    foreign files. Runs off the GUI thread: it reads recipes and tokenizer digests."""
    names = display_names(entries)
    targets = [
        _choice(e, draft, names[e.path])
        for e in entries
        if e.ok and role_of(e) in TARGET_ROLES and e.path != draft.path
    ]
    return DraftLook(draft.path, tuple(targets), tuple(foreign_files(draft.path)))


def refusal_lines(targets: tuple[TargetChoice, ...]) -> list[str]:
    """Each distinct reason once, after the targets it holds for ("a, b, c: reason"): a
    line per target repeated one reason down the dialog and squeezed the results to
    three rows at 1280x800. More than MAX_REASONS reasons: the rest are counted (each
    row's Pairing tooltip has its own)."""
    names: dict[str, list[str]] = {}
    for target in targets:
        if target.refusal:
            names.setdefault(target.refusal, []).append(target.name)
    lines = [f"{', '.join(held)}: {reason}" for reason, held in names.items()]
    if len(lines) > MAX_REASONS:
        more = len(lines) - MAX_REASONS + 1
        lines[MAX_REASONS - 1 :] = [f"… and {more} other reasons: see each row's Pairing"]
    return lines


class MeasureChoices(QWidget):
    draft_changed = Signal(object)  # the chosen draft's PackEntry, or None
    ticks_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.draft_box = QComboBox()
        self.draft_box.setMinimumContentsLength(30)
        self.targets = QTreeWidget()
        self.targets.setObjectName("measureTargets")
        self.targets.setHeaderLabels(["Target", "Pairing", "Progress"])
        self.targets.setRootIsDecorated(False)
        self.targets.setUniformRowHeights(True)
        header = self.targets.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(PAIRING, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(PROGRESS, QHeaderView.ResizeMode.ResizeToContents)
        self.bench = QRadioButton("Bench: the recipes as they are")
        self.bench.setToolTip(
            "Six interleaved plain/speculative run pairs with the pair's recipes: the "
            "fewest for a 95 % interval"
        )
        self.quick = QRadioButton("Quick tune: draft length 1-4, the best one taken")
        self.quick.setToolTip("Takes longer: every draft length is measured, then the leaders")
        self.bench.setChecked(True)
        methods = QButtonGroup(self)
        methods.addButton(self.bench)
        methods.addButton(self.quick)
        method_row = QHBoxLayout()
        method_row.addWidget(self.bench)
        method_row.addWidget(self.quick)
        method_row.addStretch(1)
        self.refused = wrap_to_width(QLabel())  # each refused target's whole reason
        self.refused.setTextFormat(Qt.TextFormat.PlainText)
        self.refused.hide()
        self.note = wrap_to_width(QLabel())
        self.note.setObjectName("pageHint")
        self.note.setTextFormat(Qt.TextFormat.PlainText)

        top = QFormLayout()
        top.addRow("Draft pack:", self.draft_box)
        bottom = QFormLayout()
        bottom.addRow("Method:", method_row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(QLabel("Targets from the Library (the ticked ones are measured in turn):"))
        layout.addWidget(self.targets, 1)
        layout.addWidget(self.refused)
        layout.addLayout(bottom)
        layout.addWidget(self.note)
        self._entries: list[PackEntry] = []
        self.draft_box.currentIndexChanged.connect(self._on_draft_chosen)
        self.targets.itemChanged.connect(lambda *_: self.ticks_changed.emit())

    def show_drafts(self, entries: list[PackEntry], chosen: Path | None) -> None:
        """The Library's drafts in the box, `chosen` (else the first) selected."""
        self._entries = drafts_in(entries)
        names = display_names(entries)  # over every pack: the Library's labels
        self.draft_box.blockSignals(True)
        self.draft_box.clear()
        for entry in self._entries:
            self.draft_box.addItem(names[entry.path], str(entry.path))
            self.draft_box.setItemData(
                self.draft_box.count() - 1, str(entry.path), Qt.ItemDataRole.ToolTipRole
            )
        paths = [e.path for e in self._entries]
        self.draft_box.setCurrentIndex(paths.index(chosen) if chosen in paths else 0)
        self.draft_box.blockSignals(False)
        self._on_draft_chosen()

    def draft(self) -> PackEntry | None:
        index = self.draft_box.currentIndex()
        return self._entries[index] if 0 <= index < len(self._entries) else None

    def _on_draft_chosen(self) -> None:
        self.targets.clear()
        self.refused.hide()
        self.draft_changed.emit(self.draft())

    def show_targets(self, look: DraftLook) -> None:
        self.targets.blockSignals(True)
        self.targets.clear()
        for choice in look.targets:
            item = QTreeWidgetItem([choice.name, choice.words, ""])
            item.setData(NAME, PATH_ROLE, str(choice.path))
            item.setToolTip(NAME, str(choice.path))
            item.setToolTip(PAIRING, choice.details or choice.words)
            if choice.refusal:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                item.setCheckState(NAME, Qt.CheckState.Unchecked)
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                ticked = Qt.CheckState.Checked if choice.ticked else Qt.CheckState.Unchecked
                item.setCheckState(NAME, ticked)
            self.targets.addTopLevelItem(item)
        self.targets.blockSignals(False)
        refused = refusal_lines(look.targets)
        self.refused.setText("Not measured here:\n" + "\n".join(refused) if refused else "")
        self.refused.setVisible(bool(refused))
        self.ticks_changed.emit()

    def items(self) -> list[QTreeWidgetItem]:
        found = (self.targets.topLevelItem(i) for i in range(self.targets.topLevelItemCount()))
        return [item for item in found if item is not None]

    def ticked(self) -> list[QTreeWidgetItem]:
        return [
            item
            for item in self.items()
            if item.checkState(NAME) == Qt.CheckState.Checked
            and item.flags() & Qt.ItemFlag.ItemIsEnabled
        ]

    def ticked_paths(self) -> list[Path]:
        return [Path(str(item.data(NAME, PATH_ROLE))) for item in self.ticked()]

    def set_running(self, running: bool) -> None:
        for widget in (self.draft_box, self.bench, self.quick):
            widget.setEnabled(not running)
        # The list stays readable (and scrollable) while it shows the progress; no tick
        # changes under a running measurement.
        checkable = Qt.ItemFlag.ItemIsUserCheckable
        self.targets.blockSignals(True)
        for item in self.items():
            if item.flags() & Qt.ItemFlag.ItemIsEnabled:
                flags = item.flags()
                item.setFlags(flags & ~checkable if running else flags | checkable)
        self.targets.blockSignals(False)
