"""The draft recipe's "Drafting (DraftDeck)" group: adaptive drafting and the per-round
stop of the draft pack, kept in its .draftdeck-drafting.json (core/recipe/
drafting_settings.py), edited like the recipe beside it.

Edits are commands on the draft recipe's undo stack, so Ctrl+Z takes back recipe and
drafting edits in the order they were made; the page saves, reverts and re-reads the
file with the recipe. The settings held here are the truth and the widgets show them:
a value the spin box rounds (0.125 shown as 0.13) is written only once the user edits it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.recipe.drafting_document import DraftingDocument
from app.core.recipe.drafting_settings import DRAFTING_FILE, DraftingSettings
from app.ui.base.labels import wrap_to_width
from app.ui.recipes.recipe_undo import UndoKeysToPage

OWN_FILE = (
    f"A DraftDeck setting of this draft pack, kept in its {DRAFTING_FILE}; MNN and TokForge "
    "do not read it (they draft the full length every round)."
)
ADAPTIVE_TIP = (
    "On: each round drafts only as many tokens as pay off, up to the recipe's "
    "draft_predict_length, judged from the speed measured while DraftDeck runs; where "
    "drafting does not pay, it decodes plainly and tries drafting again now and then.\n"
    "Off: every round drafts the full draft_predict_length (unless Stop drafting below "
    f"ends it sooner).\n\n{OWN_FILE}"
)
STOP_TIP = (
    "A round stops drafting when the draft model's confidence in its next token (its top-1 "
    "probability, 0 to 1) falls below this: an unsure guess is likely to be rejected. "
    "0 never stops a round early. With Adaptive drafting on, this is a floor under the "
    f"length it learns.\n\n{OWN_FILE}"
)


class SetDrafting(QUndoCommand):
    """One change of the drafting settings; steps of one field in a row merge."""

    def __init__(
        self,
        group: DraftingGroup,
        before: DraftingSettings,
        after: DraftingSettings,
        text: str,
        merge_key: str | None = None,
    ) -> None:
        super().__init__(text)
        self.group, self.before, self.after = group, before, after
        self.merge_key = merge_key

    def redo(self) -> None:
        self.group.show_settings(self.after)

    def undo(self) -> None:
        self.group.show_settings(self.before)

    def id(self) -> int:
        return 2 if self.merge_key else -1  # recipe_undo.SetData merges under 1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetDrafting) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        return True


class DraftingGroup(QGroupBox):
    """Emits `state_changed` when what it shows or its file's state changes."""

    state_changed = Signal()
    unsaved_name = "drafting settings"

    def __init__(self, undo_stack: QUndoStack, parent: QWidget | None = None) -> None:
        super().__init__("Drafting (DraftDeck)", parent)
        self.setObjectName("draftingGroup")
        self.setToolTip(OWN_FILE)
        self._undo_stack = undo_stack
        self.doc: DraftingDocument | None = None
        self._pack: Path | None = None  # set also when its file cannot be used
        self.settings = DraftingSettings()  # what is shown, saved or not

        self.adaptive = QCheckBox("Adaptive drafting")
        self.adaptive.setObjectName("draftingAdaptive")
        self.adaptive.setToolTip(ADAPTIVE_TIP)
        self.adaptive.clicked.connect(self._on_adaptive)
        self.stop_below = QDoubleSpinBox()
        self.stop_below.setObjectName("draftingStopBelow")
        self.stop_below.setRange(0.0, 1.0)
        self.stop_below.setDecimals(2)
        self.stop_below.setSingleStep(0.05)
        self.stop_below.setSpecialValueText("0 (never)")
        self.stop_below.setToolTip(STOP_TIP)
        self.stop_below.valueChanged.connect(self._on_stop_below)
        stop_label = QLabel("Stop drafting below")
        stop_label.setToolTip(STOP_TIP)
        self.fields = QWidget()
        rows = QFormLayout(self.fields)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.addRow(self.adaptive)
        rows.addRow(stop_label, self.stop_below)
        self.note = QLabel()
        self.note.setObjectName("pageHint")
        wrap_to_width(self.note)
        self.problem = QLabel()
        self.problem.setObjectName("warning")
        wrap_to_width(self.problem)
        self.problem.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.fields)
        layout.addWidget(self.note)
        layout.addWidget(self.problem)
        # Ctrl+Z in the spin box goes to the page's undo, not the box's own history.
        self._undo_keys = UndoKeysToPage(self)
        self._undo_keys.guard(self)
        self.clear()

    @property
    def path(self) -> Path | None:
        return self.doc.path if self.doc else None

    @property
    def dirty(self) -> bool:
        return self.doc is not None and self.settings != self.doc.settings

    # -- the file ---------------------------------------------------------------------------

    def clear(self) -> None:
        """No draft pack: nothing to show."""
        self.doc = None
        self._pack = None
        self.show_problem(None)
        self.show_settings(DraftingSettings())
        self.fields.setEnabled(False)

    def load(self, pack: Path) -> None:
        """The pack's settings as its file holds them (the defaults without one). A file
        that cannot be used is said here, with the fields locked: nothing overwrites it
        until it is fixed (or deleted) and read again."""
        self._pack = pack
        try:
            self.doc = DraftingDocument.load(pack)
        except FileError as exc:
            self.doc = None
            self.show_problem(exc)
            self.show_settings(DraftingSettings())
            self.fields.setEnabled(False)
            return
        self.show_problem(None)
        self.fields.setEnabled(True)
        self.show_settings(self.doc.settings)

    def changed_on_disk(self) -> bool:
        """The file is not as read (a file that could not be used: it may be fixed now)."""
        if self._pack is None:
            return False
        return self.doc is None or self.doc.changed_on_disk()

    def reread(self, text: str) -> None:
        """The file as it is now, as one undoable step (the file may have been fixed or
        broken since: the group says so)."""
        if self._pack is None:
            return
        before = self.settings
        self.load(self._pack)
        if self.doc is not None and before != self.settings:
            self._undo_stack.push(SetDrafting(self, before, self.settings, text))

    def save(self, overwrite_changes: bool = False) -> Path | None:
        """Write the settings shown; the file written (None: nothing to write). Raises
        FileError (ChangedOnDiskError when it was changed elsewhere: nothing written)."""
        if self.doc is None or not self.dirty:
            return None
        self.doc.save(self.settings, overwrite_changes=overwrite_changes)
        self.show_settings(self.settings)  # "not saved yet" goes
        return self.doc.path

    # -- showing and editing ------------------------------------------------------------------

    def show_settings(self, settings: DraftingSettings) -> None:
        self.settings = settings
        for widget in (self.adaptive, self.stop_below):
            widget.blockSignals(True)
        self.adaptive.setChecked(settings.adaptive)
        # Not the value being typed: setting it again rewrites the text under the cursor
        # (a typed 0 becomes "0 (never)" and the next keys are lost).
        if self.stop_below.value() != settings.stop_below:
            self.stop_below.setValue(settings.stop_below)
        for widget in (self.adaptive, self.stop_below):
            widget.blockSignals(False)
        self.note.setText(self._note())
        self.note.setVisible(bool(self.note.text()))  # no gap above a problem
        self.state_changed.emit()

    def _note(self) -> str:
        if self.doc is None:
            return ""
        if self.doc.on_disk:
            return f"DraftDeck's own, kept in {DRAFTING_FILE}; MNN and TokForge do not read it."
        return (
            f"DraftDeck's defaults: no {DRAFTING_FILE} yet (saving a change creates it); "
            "MNN and TokForge do not read it."
        )

    def show_problem(self, exc: FileError | None) -> None:
        if exc is not None:
            self.problem.setText(
                f"✕ {exc.path.parent.name}/{exc.path.name}: {exc.problem}. DraftDeck leaves "
                "it as it is: fix or delete it, and this page reads it again when next opened."
            )
            self.problem.setToolTip(str(exc.path))  # the whole path would wrap over many lines
        self.problem.setVisible(exc is not None)

    def _on_adaptive(self, checked: bool) -> None:
        after = dataclasses.replace(self.settings, adaptive=checked)
        self._push(after, "Change adaptive drafting")

    def _on_stop_below(self, value: float) -> None:
        after = dataclasses.replace(self.settings, stop_below=value)
        self._push(after, "Change stop drafting below", merge_key="stop_below")

    def _push(self, after: DraftingSettings, text: str, merge_key: str | None = None) -> None:
        if after != self.settings:
            self._undo_stack.push(SetDrafting(self, self.settings, after, text, merge_key))
