"""Edit one recipe file: a typed form and the raw JSON, kept in sync both ways.

The current data (a dict) is the single source of truth. Form edits, JSON edits and
re-reads of the file become undo commands that set it; applying data redraws whichever
views did not produce it. JSON text becomes a command once it parses (a moment after
typing stops, when the pane loses focus, before undo and save), so the stack holds only
valid documents: text that never parsed is never brought back by undo. Saving goes
through RecipeDocument (atomic, .bak, change detection), into `twins` as well: a second
file that must hold the same recipe (a draft's draft_config_cpu.json beside its
config_cpu.json, see core/recipe/draft_recipes.py).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QUndoStack
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import EmptyFileError, FileError, InvalidJsonError
from app.core.recipe.draft_recipes import OutOfStepError, save_in_step
from app.core.recipe.files import (
    InvalidRecipeError,
    RecipeDocument,
    original_path,
    original_text,
    reset_to_original,
)
from app.core.recipe.presets import Preset
from app.core.recipe.schema import ERROR, Problem, recipe_problems
from app.ui.base.labels import wrap_to_width
from app.ui.base.scheme import colours, scheme
from app.ui.recipes.recipe_fields import FieldEditor
from app.ui.recipes.recipe_form import RecipeForm
from app.ui.recipes.recipe_missing import MissingRecipe, preset_values
from app.ui.recipes.recipe_undo import SetData, UndoKeysToPage

log = logging.getLogger("draftdeck.ui.recipes")
JSON_DELAY_MS = 300


class RecipeEditor(QWidget):
    """Form + JSON + diff for one file. Emits `state_changed` when dirty/validity change."""

    state_changed = Signal()

    def __init__(self, scope: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope = scope
        self.doc: RecipeDocument | None = None
        # Files saved with the same data as `doc` (the page sets them after each load).
        self.twins: list[RecipeDocument] = []
        self.data: dict[str, Any] = {}
        self._unshowable: set[str] = set()
        self.problems: list[Problem] = []
        self.json_error: InvalidJsonError | None = None
        # This computer's settings over this file (the page's "On this computer" group):
        # the checks say what runs here with them.
        self.here: Callable[[], dict[str, Any]] = dict
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        scheme().changed.connect(self._recolour)

        self.form = RecipeForm(scope)
        self.form.edited.connect(self._on_field_changed)
        self.editors: dict[str, FieldEditor] = self.form.editors
        self.fields_box = self.form.fields_box
        self.others = self.form.others
        self.problem_label = self.form.problem_label

        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.json_edit = QPlainTextEdit()
        self.json_edit.setObjectName("jsonView")
        self.json_edit.setFont(mono)
        self.json_edit.textChanged.connect(self._on_json_typed)
        self.json_edit.installEventFilter(self)  # leaving the pane commits its text
        self.json_status = QLabel()
        wrap_to_width(self.json_status)  # a long parse error must not widen the window
        self.diff_view = QPlainTextEdit()
        self.diff_view.setReadOnly(True)
        self.diff_view.setFont(mono)
        self._json_timer = QTimer(self)
        self._json_timer.setSingleShot(True)
        self._json_timer.setInterval(JSON_DELAY_MS)
        self._json_timer.timeout.connect(self.sync_from_json)

        json_box = QWidget()
        json_layout = QVBoxLayout(json_box)
        json_layout.setContentsMargins(0, 0, 0, 0)
        json_layout.addWidget(self.json_edit)
        json_layout.addWidget(self.json_status)
        self.views = QTabWidget()
        self.views.addTab(json_box, "JSON")
        self.views.addTab(self.diff_view, "Changes from pack original")

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.form)
        splitter.addWidget(self.views)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        # A file the pack does not have: what is missing and a preset to start it from,
        # instead of an empty editor (see `missing`).
        self.missing = MissingRecipe(scope)
        self.missing.chosen.connect(self.create_from)
        self.stack = QStackedWidget()
        self.stack.addWidget(splitter)
        self.stack.addWidget(self.missing)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)
        self._undo_keys = UndoKeysToPage(self)
        self._undo_keys.guard(self)
        self.setEnabled(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.json_edit and event.type() == QEvent.Type.FocusOut:
            self.sync_from_json()
        return super().eventFilter(watched, event)

    def _on_clean_changed(self, clean: bool) -> None:
        self._show_view()
        self.state_changed.emit()

    @property
    def missing_file(self) -> bool:
        """The pack has no such file and nothing was started in its place."""
        return (
            self.doc is not None
            and not self.doc.on_disk
            and not self.data
            and self.undo_stack.isClean()
            and not self.json_pending
        )

    def _show_view(self) -> None:
        if self.doc is not None and self.missing_file:
            self.missing.show_file(self.doc.path)
            self.stack.setCurrentWidget(self.missing)
        else:
            self.stack.setCurrentIndex(0)

    # -- loading --------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        return self.doc.path if self.doc else None

    def load(self, path: Path) -> None:
        """Open a recipe (a missing one starts empty); raises FileError on a broken file."""
        self.doc = RecipeDocument.open_or_new(path)
        self.twins = []
        self.undo_stack.clear()
        self.json_error = None
        self.setEnabled(True)
        self.apply(dict(self.doc.data))
        self.undo_stack.setClean()

    def clear(self) -> None:
        self.doc = None
        self.twins = []
        self.undo_stack.clear()
        self.apply({})
        self.setEnabled(False)

    @property
    def json_pending(self) -> bool:
        """JSON text typed but not yet a document state (not parsed yet, or not parsing)."""
        return self._json_timer.isActive() or self.json_error is not None

    @property
    def dirty(self) -> bool:
        """Unsaved edits, including JSON text that does not parse yet. Compared with what
        the file holds, not the undo stack's clean mark: undoing back to the saved data
        after the mark was lost (undo past a save, then a new change) is not an edit."""
        if self.doc is None:
            return False
        saved = self.doc.data
        return self.json_pending or self.data != saved or list(self.data) != list(saved)

    # -- undo -----------------------------------------------------------------------------

    def can_undo(self) -> bool:
        return self.json_pending or self.undo_stack.canUndo()

    def can_redo(self) -> bool:
        return not self.json_pending and self.undo_stack.canRedo()

    def undo_text(self) -> str:
        return "Edit JSON" if self.json_pending else self.undo_stack.undoText()

    def undo(self) -> None:
        """Take back the newest change: typed JSON first, whether it parses or not."""
        self.sync_from_json()
        if self.json_error is not None:
            self.apply(self.data)  # back to the last valid document; the bad text goes
        else:
            self.undo_stack.undo()

    def redo(self) -> None:
        self.sync_from_json()  # JSON that parses is a new change: nothing left to redo
        if self.json_error is None:
            self.undo_stack.redo()

    # -- the one way data changes -----------------------------------------------------------

    def apply(self, data: dict[str, Any], keep_json_text: bool = False) -> None:
        self.data = dict(data)
        self._unshowable = self.form.show_data(self.data)
        if not keep_json_text:
            self._set_json_text(self.doc.render(self.data) if self.doc else "")
            self.json_error = None
        self._refresh_checks()
        self._show_view()
        self.state_changed.emit()

    def _set_json_text(self, text: str) -> None:
        self.json_edit.blockSignals(True)
        self.json_edit.setPlainText(text)
        self.json_edit.blockSignals(False)
        self._json_timer.stop()

    def _change(
        self,
        after: dict[str, Any],
        text: str,
        merge_key: str | None = None,
        from_json: bool = False,
    ) -> None:
        if after == self.data and list(after) == list(self.data):
            return
        self.undo_stack.push(SetData(self, dict(self.data), after, text, merge_key, from_json))

    def set_data(self, after: dict[str, Any], text: str) -> None:
        """Change the whole document as one undoable step (Move to this computer)."""
        self._change(after, text)

    def refresh_checks(self) -> None:
        """Check the recipe again (this computer's settings over it changed)."""
        self._refresh_checks()

    def _on_field_changed(self, key: str) -> None:
        self._change(self.form.edited_data(key), f"Change {key}", merge_key=key)

    def _on_json_typed(self) -> None:
        self._json_timer.start()
        self.state_changed.emit()  # there is something to undo from now on

    def sync_from_json(self) -> None:
        """Parse the JSON view now (also runs by itself shortly after typing stops)."""
        self._json_timer.stop()
        if self.doc is None:
            return
        try:
            data = RecipeDocument.parse(self.doc.path, self.json_edit.toPlainText())
        except (InvalidJsonError, EmptyFileError) as exc:
            # All text deleted is JSON that does not parse yet, like any other.
            if isinstance(exc, InvalidJsonError):
                self.json_error = exc
            else:
                self.json_error = InvalidJsonError(exc.path, exc.problem)
            self._refresh_checks()
            self.state_changed.emit()
            return
        self.json_error = None
        self._change(data, "Edit JSON", from_json=True)
        self._refresh_checks()
        self.state_changed.emit()

    def apply_preset(self, preset: Preset, text: str = "Preset") -> None:
        values = preset_values(preset, self.scope)
        self._change({**self.data, **values}, f"{text}: {preset.name}")

    def create_from(self, preset: Preset) -> None:
        """Start a file the pack does not have with a preset's values (Save writes it)."""
        self.apply_preset(preset, "Create from preset")

    # -- checks ---------------------------------------------------------------------------

    def _recolour(self) -> None:
        if self.doc is not None:  # its problems are drawn in the scheme's colours
            self._refresh_checks()

    def _refresh_checks(self) -> None:
        base = self.doc.path.parent if self.doc else Path()
        self.problems = recipe_problems(self.data, self.scope, base, self.here())
        by_key: dict[str, str] = {}
        for problem in self.problems:
            if problem.key and problem.severity == ERROR:
                by_key.setdefault(problem.key, problem.message)
        self.form.set_problems(by_key, self._unshowable)
        unlisted = self.form.unlisted(self.data)
        others = "Other keys, passed to MNN as they are (edit them in the JSON): "
        self.others.setText(others + ", ".join(unlisted) if unlisted else "")
        lines = []
        self.fields_box.setEnabled(self.json_error is None)
        if self.json_error is not None:
            lines.append(
                f"<span style='color:{colours().error}'>✕ JSON: {self.json_error.problem}. "
                "The form is locked until the JSON is valid; Undo (Ctrl+Z) goes back to the last "
                "valid version.</span>"
            )
        for problem in self.problems:
            error = problem.severity == ERROR
            colour, mark = (colours().error, "✕") if error else (colours().caution, "⚠")
            lines.append(f"<span style='color:{colour}'>{mark} {problem}</span>")
        self.problem_label.setText("<br>".join(lines))
        status = f"✕ {self.json_error.problem}" if self.json_error else "✓ valid JSON"
        if self.doc is not None and not self.doc.on_disk:
            status += f" · not saved yet: Save creates {self.doc.path.name}"
        self.json_status.setText(status)
        self._refresh_diff()

    def _refresh_diff(self) -> None:
        if self.doc is None:
            self.diff_view.setPlainText("")
            return
        shipped = original_text(self.doc.path) if self.doc.path.exists() else ""
        current = self.doc.render(self.data)
        diff = difflib.unified_diff(
            (shipped or "").splitlines(keepends=True),
            current.splitlines(keepends=True),
            "pack original",
            "current",
        )
        self.diff_view.setPlainText("".join(diff) or "No changes from what the pack shipped.")

    def save_refusals(self) -> list[str]:
        """Why saving is not possible now (empty when it is)."""
        reasons = []
        if self.json_error is not None:
            reasons.append(str(self.json_error))
        reasons += [str(p) for p in self.problems if p.severity == ERROR]
        return reasons

    # -- file operations --------------------------------------------------------------------

    def save(self, overwrite_changes: bool = False) -> list[Path]:
        """Write the recipe and its twins; the files written. Raises FileError
        (ChangedOnDiskError when one was edited elsewhere, then nothing is written;
        OutOfStepError when this file was written and a twin was not)."""
        if self.doc is None:
            return []
        self.sync_from_json()
        refusals = self.save_refusals()
        if refusals:
            raise InvalidRecipeError(self.doc.path, "not saved: " + "; ".join(refusals))
        try:
            save_in_step(self.doc, self.twins, self.data, overwrite_changes=overwrite_changes)
        except OutOfStepError:
            self._saved()  # this file holds the edits now; the error says the rest
            raise
        self._saved()
        return [doc.path for doc in (self.doc, *self.twins)]

    def _saved(self) -> None:
        assert self.doc is not None
        self.undo_stack.setClean()
        self._refresh_checks()  # the diff, and a new file's "not saved yet"
        log.info("saved %s", self.doc.path)

    def revert(self) -> None:
        """Throw away unsaved edits and read the file again (undo brings them back)."""
        self.reread("Revert")

    def reread(self, text: str) -> None:
        """The file as it is on disk, as one undoable step that leaves the editor clean
        (also when another part of DraftDeck wrote it)."""
        if self.doc is None:
            return
        self.doc = RecipeDocument.open_or_new(self.doc.path)
        self.json_error = None
        self._change(dict(self.doc.data), text)
        self.apply(self.data)  # also when the data did not change: drops unparsed text
        self.undo_stack.setClean()

    def as_shipped(self) -> bool:
        """Whether the file on disk is the pack's own (no kept original: never edited
        by DraftDeck), so that Reset would only write a .bak of the same bytes."""
        if self.doc is None:
            return False
        original = original_path(self.doc.path)
        try:
            return not original.is_file() or original.read_bytes() == self.doc.path.read_bytes()
        except OSError:
            return False  # Reset says what is wrong

    def reset_to_pack(self, with_twins: bool = True) -> bool:
        """The file as the pack shipped it, and its twins too unless they have drifted
        from it since they were found alike (`with_twins` False)."""
        if self.doc is None:
            return False
        restored = _reset(self.doc.path)
        # Back to what the pack shipped too: one reset, as one save.
        for twin in self.twins if with_twins else []:
            _reset(twin.path)
        if restored:
            self.reread("Reset to pack default")
        return restored


def _reset(path: Path) -> bool:
    try:
        return reset_to_original(path)
    except OSError as exc:
        raise FileError(path, f"could not restore: {exc}") from None
