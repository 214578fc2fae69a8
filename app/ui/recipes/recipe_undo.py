"""Undo for a recipe: one stack of whole-document states per file, whatever has focus.

Text, spin and line widgets keep undo histories of their own, which would step back to
states the document never had (the JSON box's would resurrect text that never parsed).
So they neither claim the undo keys nor act on them: the Recipes page's shortcuts get
the keys and go to the document's stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeyEvent, QKeySequence, QUndoCommand
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QPlainTextEdit, QWidget

if TYPE_CHECKING:
    from app.ui.recipes.recipe_editor import RecipeEditor

UNDO_KEYS = (QKeySequence("Ctrl+Z"),)
REDO_KEYS = (QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y"))


class SetData(QUndoCommand):
    """One document change: the data before and after (both parsed, valid JSON)."""

    def __init__(
        self,
        editor: RecipeEditor,
        before: dict[str, Any],
        after: dict[str, Any],
        text: str,
        merge_key: str | None,
        from_json: bool,
    ) -> None:
        super().__init__(text)
        self.editor, self.before, self.after = editor, before, after
        self.merge_key = merge_key
        self._first = from_json  # the JSON view already shows this text

    def redo(self) -> None:
        self.editor.apply(self.after, keep_json_text=self._first)
        self._first = False

    def undo(self) -> None:
        self.editor.apply(self.before)

    def id(self) -> int:
        return 1 if self.merge_key else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetData) or other.merge_key != self.merge_key:
            return False
        self.after = other.after  # e.g. several clicks on one spin box: one undo step
        return True


def _is_undo_key(event: QKeyEvent) -> bool:
    pressed = QKeySequence(event.keyCombination())
    return pressed in UNDO_KEYS or pressed in REDO_KEYS


class UndoKeysToPage(QObject):
    """Event filter: the widget lets the undo keys through to the page's shortcuts and
    ignores them itself (they reach it only when there is nothing to undo)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kinds = (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress)
        if event.type() in kinds and isinstance(event, QKeyEvent) and _is_undo_key(event):
            event.ignore()  # an unaccepted override lets the shortcut run
            return True
        return super().eventFilter(watched, event)

    def guard(self, root: QWidget) -> None:
        """Filter every text-holding widget in `root` (a spin box's focus is its line edit)."""
        for kind in (QPlainTextEdit, QLineEdit, QAbstractSpinBox):
            widgets = [root] if isinstance(root, kind) else []
            for widget in widgets + root.findChildren(kind):
                widget.installEventFilter(self)
                if isinstance(widget, QPlainTextEdit):
                    widget.setUndoRedoEnabled(False)
