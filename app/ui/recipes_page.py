"""The Recipes page: the selected pair's draft recipe and target settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.pack.bundle import read_bundle
from app.core.pack.files import BACKUP_SUFFIX, DRAFT_RECIPE
from app.core.recipe.files import TARGET_CONFIG, ChangedOnDiskError
from app.core.recipe.presets import Preset, presets_for
from app.core.recipe.schema import DRAFT, TARGET
from app.ui.dialogs import ask, show_error, show_file_error
from app.ui.pair_selection import PairSelection
from app.ui.recipe_editor import RecipeEditor


class RecipesPage(QWidget):
    def __init__(self, selection: PairSelection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selection = selection
        self._loaded: tuple[Path | None, Path | None] = (None, None)

        title = QLabel("Recipes")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel()
        self.subtitle.setObjectName("pageHint")
        self.subtitle.setWordWrap(True)

        self.draft_editor = RecipeEditor(DRAFT)
        self.target_editor = RecipeEditor(TARGET)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.draft_editor, "Draft recipe")
        self.tabs.addTab(self.target_editor, "Target settings")
        for editor in self.editors:
            editor.state_changed.connect(self._update_state)
            editor.undo_stack.indexChanged.connect(self._on_index_changed)
        self.tabs.currentChanged.connect(self._on_index_changed)

        self.toolbar = QToolBar()
        self.act_undo = self._action("Undo", QKeySequence.StandardKey.Undo, self.undo)
        self.act_redo = self._action("Redo", QKeySequence.StandardKey.Redo, self.redo)
        self.toolbar.addSeparator()
        self.act_save = self._action("Save", QKeySequence.StandardKey.Save, self.save)
        self.act_revert = self._action("Revert", None, self.revert)
        self.act_reset = self._action("Reset to Pack Default", None, self.reset_to_pack)
        self.preset_combo = QComboBox()
        self.preset_combo.setToolTip("Apply a preset to both files (undo takes it back)")
        self.act_preset = QAction("Apply Preset", self)
        self.act_preset.triggered.connect(self.apply_selected_preset)

        top = QHBoxLayout()
        top.addWidget(self.toolbar)
        top.addStretch(1)
        top.addWidget(QLabel("Preset:"))
        top.addWidget(self.preset_combo)
        preset_bar = QToolBar()
        preset_bar.addAction(self.act_preset)
        top.addWidget(preset_bar)

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(self.subtitle)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        selection.changed.connect(self.load_selection)
        self._update_state()

    def _action(
        self, text: str, keys: QKeySequence.StandardKey | None, slot: Callable[[], object]
    ) -> QAction:
        action = QAction(text, self)
        if keys is not None:
            action.setShortcut(keys)
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        self.addAction(action)
        self.toolbar.addAction(action)
        return action

    @property
    def editors(self) -> tuple[RecipeEditor, RecipeEditor]:
        return (self.draft_editor, self.target_editor)

    def current_editor(self) -> RecipeEditor:
        widget = self.tabs.currentWidget()
        assert isinstance(widget, RecipeEditor)
        return widget

    def has_unsaved(self) -> bool:
        return any(e.dirty for e in self.editors)

    # -- loading --------------------------------------------------------------------------

    def load_selection(self) -> None:
        wanted = (self.selection.target, self.selection.draft)
        if wanted == self._loaded:
            return
        if self.has_unsaved():
            names = ", ".join(str(e.path) for e in self.editors if e.dirty)
            ask(
                self,
                "Unsaved recipe changes",
                f"The pair changed, but these recipes have unsaved changes:\n{names}\n\n"
                "Discard them and open the new pair's recipes?",
                "Discard",
                self._load_pair,
            )
            return
        self._load_pair()

    def _load_pair(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        self._loaded = (target, draft)
        if target is None or draft is None:
            for editor in self.editors:
                editor.clear()
            self.subtitle.setText("Choose a target and a draft on the Pair page first.")
            self._update_state()
            return
        self.subtitle.setText(
            f"Draft {draft.name}: {draft / DRAFT_RECIPE}\nTarget {target.name}: "
            f"{target / TARGET_CONFIG}\nWhat you save here is what Chat and Tune use next."
        )
        for editor, path in (
            (self.draft_editor, draft / DRAFT_RECIPE),
            (self.target_editor, target / TARGET_CONFIG),
        ):
            try:
                editor.load(path)
            except FileError as exc:
                editor.clear()
                show_file_error(self, "Cannot open recipe", exc)
        self._fill_presets(draft)
        self._update_state()

    def _fill_presets(self, draft: Path) -> None:
        try:
            info = read_bundle(draft)
        except FileError:
            info = None
        self.preset_combo.clear()
        for preset in presets_for(info):
            self.preset_combo.addItem(preset.name, preset)
            self.preset_combo.setItemData(
                self.preset_combo.count() - 1, preset.description, Qt.ItemDataRole.ToolTipRole
            )

    def showEvent(self, event: QShowEvent) -> None:
        self.load_selection()
        # Files changed elsewhere (Tune's "Apply Best", another editor) are re-read,
        # unless there are unsaved edits here: saving then asks before overwriting.
        for editor in self.editors:
            if editor.doc is not None and not editor.dirty and editor.doc.changed_on_disk():
                editor.revert()
        super().showEvent(event)

    # -- actions --------------------------------------------------------------------------

    def _on_index_changed(self, index: int) -> None:
        self._update_state()

    def _update_state(self) -> None:
        editor = self.current_editor()
        stack = editor.undo_stack
        self.act_undo.setEnabled(stack.canUndo())
        self.act_redo.setEnabled(stack.canRedo())
        self.act_undo.setText(f"Undo {stack.undoText()}".strip())
        self.act_redo.setText(f"Redo {stack.redoText()}".strip())
        self.act_save.setEnabled(self.has_unsaved())
        self.act_revert.setEnabled(editor.dirty)
        self.act_reset.setEnabled(editor.doc is not None)
        self.act_preset.setEnabled(self.preset_combo.count() > 0 and editor.doc is not None)
        for index, name in enumerate(("Draft recipe", "Target settings")):
            marker = " •" if self.editors[index].dirty else ""
            self.tabs.setTabText(index, name + marker)

    def undo(self) -> None:
        self.current_editor().undo_stack.undo()

    def redo(self) -> None:
        self.current_editor().undo_stack.redo()

    def apply_selected_preset(self) -> None:
        preset = self.preset_combo.currentData()
        if isinstance(preset, Preset):
            for editor in self.editors:
                if editor.doc is not None:
                    editor.apply_preset(preset)

    def save(self) -> None:
        for editor in self.editors:
            if editor.dirty:
                self._save_one(editor)
        self._update_state()

    def _save_one(self, editor: RecipeEditor, overwrite: bool = False) -> None:
        try:
            editor.save(overwrite_changes=overwrite)
        except ChangedOnDiskError as exc:
            ask(
                self,
                "Recipe changed on disk",
                f"{exc.path} was changed by another program since it was opened.\n\n"
                "Overwrite it with your version? (Revert instead to see theirs.)",
                "Overwrite",
                lambda: self._save_one(editor, overwrite=True),
            )
        except FileError as exc:
            show_file_error(self, "Recipe not saved", exc)
        self._update_state()

    def revert(self) -> None:
        editor = self.current_editor()
        if editor.path is not None:
            ask(
                self,
                "Revert recipe",
                f"Throw away unsaved changes to {editor.path}?",
                "Revert",
                editor.revert,
            )

    def reset_to_pack(self) -> None:
        editor = self.current_editor()
        if editor.path is None:
            return
        path = editor.path

        def reset() -> None:
            try:
                restored = editor.reset_to_pack()
            except FileError as exc:
                show_file_error(self, "Reset failed", exc)
                return
            if not restored:
                show_error(
                    self,
                    "Nothing to reset",
                    f"{path} has not been edited by DraftDeck, so it is as the pack shipped it.",
                )
            self._update_state()

        ask(
            self,
            "Reset to pack default",
            f"Replace {path} with the version the pack shipped? The current file is kept "
            f"as {path.name}{BACKUP_SUFFIX}.",
            "Reset",
            reset,
        )
