"""A recipe tab's "On this computer" group: what DraftDeck runs the pack with here, over
the recipe above it (the phone's), kept in the pack's .draftdeck-this-computer.json
(core/recipe/desktop_settings.py): never pushed to a phone, never published.

Each row is "as on the phone" until set; the text says the recipe's value it leaves in
force. Edits are commands on the tab's undo stack (as the Drafting group's), saved,
reverted and re-read with the recipe. A file that cannot be used is said in the group,
its fields locked and the file left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.recipe.desktop_document import DesktopDocument
from app.core.recipe.desktop_settings import (
    THIS_COMPUTER_FILE,
    DesktopSettings,
    host_fixes,
)
from app.core.recipe.schema import FIELDS
from app.ui.base.labels import wrap_to_width
from app.ui.recipes.recipe_fields import NOT_SET, FieldEditor, json_text, make_editor
from app.ui.recipes.recipe_undo import UndoKeysToPage

TITLE = "On this computer (DraftDeck)"
MOVE_TEXT = "Move to This Computer"
MOVE_TIP = (
    "Move this computer's values out of the phone's recipes (both tabs) into “On this "
    "computer”: thread counts, precision, memory and backend unlike what the pack shipped, "
    "and memory normal. What runs here stays the same."
)
OWN_FILE = (
    f"What DraftDeck runs this pack with on this computer, over the recipe above (the "
    f"phone's); kept in the pack's {THIS_COMPUTER_FILE}, never pushed to a phone and never "
    "published."
)


def _words(value: Any) -> str:
    """A value as the form reads it: text bare (cpu), anything else as JSON."""
    return value if isinstance(value, str) else json_text(value)


def _narrow(widget: QWidget) -> None:
    """A row no wider than the recipe's above it: "(as on the phone: normal)" is cut
    rather than widening the form past its pane (the tooltip and the open list show it)."""
    if isinstance(widget, QComboBox):
        widget.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        widget.setMinimumContentsLength(8)
    else:
        widget.setMinimumWidth(widget.fontMetrics().averageCharWidth() * 10)


class SetDesktop(QUndoCommand):
    """One change of this computer's settings; steps of one field in a row merge."""

    def __init__(
        self,
        group: DesktopGroup,
        before: DesktopSettings,
        after: DesktopSettings,
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
        return 3 if self.merge_key else -1  # SetData merges under 1, SetDrafting under 2

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetDesktop) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        return True


class DesktopGroup(QGroupBox):
    """Emits `state_changed` when what it shows or its file's state changes."""

    state_changed = Signal()
    unsaved_name = "settings for this computer"

    def __init__(
        self, undo_stack: QUndoStack, keys: tuple[str, ...], parent: QWidget | None = None
    ) -> None:
        super().__init__(TITLE, parent)
        self.setObjectName("desktopGroup")
        self.setToolTip(OWN_FILE)
        self._undo_stack = undo_stack
        self.doc: DesktopDocument | None = None
        self._pack: Path | None = None  # set also when its file cannot be used
        self.recipe_name = ""  # the recipe file the keys shown are over
        self.settings = DesktopSettings()  # what is shown, saved or not
        self._phone: dict[str, Any] = {}  # the recipe's keys, as the editor holds them
        self.editors: dict[str, FieldEditor] = {}
        self.fields = QWidget()
        rows = QFormLayout(self.fields)
        rows.setContentsMargins(0, 0, 0, 0)
        for key in keys:
            editor = make_editor(FIELDS[key])
            editor.widget.setObjectName(f"desktop_{key}")
            _narrow(editor.widget)
            editor.changed.connect(lambda key=key: self._on_edited(key))
            self.editors[key] = editor
            label = QLabel(key)
            label.setToolTip(editor.widget.toolTip())
            rows.addRow(label, editor.widget)
        self.note = wrap_to_width(QLabel())
        self.note.setObjectName("pageHint")
        self.note.setToolTip(OWN_FILE)
        self.move_button = QPushButton(MOVE_TEXT)
        self.move_button.setObjectName("moveToComputer")
        self.move_button.setToolTip(MOVE_TIP)
        self.problem = wrap_to_width(QLabel())
        self.problem.setObjectName("warning")
        self.problem.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.fields)
        layout.addWidget(self.move_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.problem)
        self._undo_keys = UndoKeysToPage(self)
        self._undo_keys.guard(self)
        self.clear()

    @property
    def path(self) -> Path | None:
        return self.doc.path if self.doc else None

    @property
    def dirty(self) -> bool:
        return self.doc is not None and self.settings != self.doc.settings

    def keys(self) -> dict[str, Any]:
        """This computer's keys over the recipe shown (saved or not)."""
        return self.settings.of(self.recipe_name)

    # -- the file ---------------------------------------------------------------------------

    def clear(self) -> None:
        self.doc = None
        self._pack = None
        self.show_problem(None)
        self.show_settings(DesktopSettings())
        self.fields.setEnabled(False)

    def load(self, pack: Path, recipe_name: str) -> None:
        """The pack's settings for this computer over the recipe file `recipe_name`. A
        file that cannot be used is said here, with the fields locked: nothing
        overwrites it until it is fixed (or deleted) and read again."""
        self._pack, self.recipe_name = pack, recipe_name
        try:
            self.doc = DesktopDocument.load(pack)
        except FileError as exc:
            self.doc = None
            self.show_problem(exc)
            self.show_settings(DesktopSettings())
            self.fields.setEnabled(False)
            return
        self.show_problem(None)
        self.fields.setEnabled(True)
        self.show_settings(self.doc.settings)

    def changed_on_disk(self) -> bool:
        if self._pack is None:
            return False
        return self.doc is None or self.doc.changed_on_disk()

    def reread(self, text: str) -> None:
        """The file as it is now, as one undoable step."""
        if self._pack is None:
            return
        before = self.settings
        self.load(self._pack, self.recipe_name)
        if self.doc is not None and before != self.settings:
            self._undo_stack.push(SetDesktop(self, before, self.settings, text))

    def save(self, overwrite_changes: bool = False) -> Path | None:
        """Write the settings shown; the file written (None: nothing to write). Raises
        FileError (ChangedOnDiskError when it was changed elsewhere: nothing written)."""
        if self.doc is None or not self.dirty:
            return None
        self.doc.save(self.settings, overwrite_changes=overwrite_changes)
        self.show_settings(self.settings)
        return self.doc.path

    # -- showing and editing ------------------------------------------------------------------

    def show_phone(self, recipe: Mapping[str, Any]) -> None:
        """The recipe's keys as the tab holds them: each unset row says what it leaves in
        force ("as on the phone: opencl; cpu here")."""
        self._phone = dict(recipe)
        fixes = host_fixes({**self._phone, **self.keys()}, self.keys())
        for key, editor in self.editors.items():
            phone = self._phone.get(key)
            shown = "not set" if phone is None else _words(phone)
            here = f"; {_words(fixes[key])} here" if key in fixes else ""
            editor.set_not_set_text(f"(as on the phone: {shown}{here})")

    def show_settings(self, settings: DesktopSettings) -> None:
        self.settings = settings
        keys = self.keys()
        for key, editor in self.editors.items():
            editor.set_value(keys.get(key, NOT_SET))
        self.show_phone(self._phone)
        self.note.setText(self._note())
        self.state_changed.emit()

    def _note(self) -> str:
        """One short line (the group's tooltip and the note's say where it is kept)."""
        if self.doc is None:
            return "Never pushed to a phone."
        set_here = ", ".join(f"{k} {_words(v)}" for k, v in self.keys().items())
        if set_here:
            return f"Here DraftDeck runs it with {set_here}; never pushed to a phone."
        return "Nothing set: here it runs as on the phone. Never pushed to a phone."

    def show_problem(self, exc: FileError | None) -> None:
        if exc is not None:
            self.problem.setText(
                f"✕ {exc.path.parent.name}/{exc.path.name}: {exc.problem}. DraftDeck leaves "
                "it as it is (the pack runs as its recipe says): fix or delete it, and this "
                "page reads it again when next opened."
            )
            self.problem.setToolTip(str(exc.path))
        self.problem.setVisible(exc is not None)

    def set_values(self, values: Mapping[str, Any], text: str) -> None:
        """Set (None: take out) keys as one undoable step (Move to this computer)."""
        after = self.settings.changed(self.recipe_name, values)
        if after != self.settings:
            self._undo_stack.push(SetDesktop(self, self.settings, after, text))

    def _on_edited(self, key: str) -> None:
        value = self.editors[key].value()
        after = self.settings.changed(self.recipe_name, {key: None if value is NOT_SET else value})
        if after != self.settings:
            self._undo_stack.push(
                SetDesktop(self, self.settings, after, f"Change {key} on this computer", key)
            )
