"""The Recipes page: the selected pair's draft recipe and target settings.

In two parts a user reads at once: "On the phone", the pack's recipe files (what a push
sends and the phone runs), and "On this computer", DraftDeck's settings for the pack
applied over them here (recipe_desktop.py). Each tab's side files (the draft's drafting
settings, this computer's settings) share its undo stack and are saved with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.recipe.draft_recipes import OutOfStepError
from app.core.recipe.files import (
    TARGET_CONFIG,
    ChangedOnDiskError,
    RecipeDocument,
    draft_recipe_path,
)
from app.core.recipe.schema import DRAFT, TARGET
from app.ui.base.dialogs import ask, show_file_error
from app.ui.base.labels import wrap_to_width
from app.ui.base.no_pair import NeedsPair
from app.ui.base.pair_selection import PairSelection
from app.ui.recipes.draft_twins import DraftTwinsPanel
from app.ui.recipes.recipe_desktop import MOVE_TEXT
from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_move import ask_to_move
from app.ui.recipes.recipe_pair_change import Pair, ask_before_switch, ask_to_leave, held_text
from app.ui.recipes.recipe_presets import PresetChooser, draft_presets, fill_presets
from app.ui.recipes.recipe_reset import ask_to_reset, ask_to_revert, offer_reset
from app.ui.recipes.recipe_sides import SideFiles, SideGroup
from app.ui.recipes.recipe_undo import REDO_KEYS, UNDO_KEYS


class RecipesPage(QWidget):
    unsaved_changed = Signal(bool)  # any recipe has edits not yet saved

    def __init__(self, selection: PairSelection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selection = selection
        self._loaded: Pair = (None, None)  # the pair whose files the editors hold

        title = QLabel("Recipes")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel()
        self.subtitle.setObjectName("pageHint")
        wrap_to_width(self.subtitle)

        # Which draft recipe runs; the diff and a choice when the pack's two differ.
        self.draft_twins = DraftTwinsPanel()
        self.draft_twins.made_same.connect(self._on_made_same)
        self.draft_editor = RecipeEditor(DRAFT)
        self.target_editor = RecipeEditor(TARGET)
        # DraftDeck's own files under each recipe's rows, on its undo stack.
        self.sides = SideFiles(self.draft_editor, self.target_editor, self._update_state)
        self.draft_desktop, self.target_desktop = (
            self.sides.draft_desktop,
            self.sides.target_desktop,
        )
        self.drafting = self.sides.drafting
        self.tabs = QTabWidget()
        self.tabs.addTab(self.draft_editor, "Draft recipe")
        self.tabs.addTab(self.target_editor, "Target settings")
        for editor in self.editors:
            editor.state_changed.connect(self._update_state)
            editor.undo_stack.indexChanged.connect(self._on_index_changed)
        self.tabs.currentChanged.connect(self._on_index_changed)

        self.toolbar = QToolBar()
        # The undo keys work from any widget on the page (the editors' text widgets pass
        # them on) and go to the current file's one stack.
        self.act_undo = self._action("Undo", UNDO_KEYS, self.undo)
        self.act_redo = self._action("Redo", REDO_KEYS, self.redo)
        self.toolbar.addSeparator()
        save_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Save)
        self.act_save = self._action("Save", save_keys, self.save)
        self.act_revert = self._action("Revert", (), self.revert)
        self.act_reset = self._action("Reset to Pack Default", (), self.reset_to_pack)
        # A button in each tab's "On this computer" group (the toolbar is full at 1024 px).
        self.act_move = QAction(MOVE_TEXT, self)
        self.act_move.triggered.connect(self.move_to_computer)
        for _editor, desktop in self.sides.desktops:
            desktop.move_button.clicked.connect(self.act_move.trigger)
        self.presets = PresetChooser()
        self.preset_combo, self.act_preset = self.presets.combo, self.presets.action
        self.preset_note = self.presets.note
        self.act_preset.triggered.connect(self.apply_selected_preset)

        top = QHBoxLayout()
        top.addWidget(self.toolbar)
        top.addStretch(1)
        top.addWidget(self.presets)

        # Saved or not, in words; wraps rather than widening the window.
        self.save_note = QLabel()
        self.save_note.setObjectName("pageHint")
        wrap_to_width(self.save_note)
        # While the pair changed under unsaved edits: the question, and the line saying so.
        self._question: QMessageBox | None = None
        self._follow_pending = False
        self.held_note = QLabel()
        self.held_note.setObjectName("warning")
        wrap_to_width(self.held_note)
        self.held_note.hide()
        self._saved: list[str] = []  # the files the last Save wrote, until the next edit
        self._saved_at = ""
        body = QWidget()  # without a pair, NeedsPair's notice instead of empty fields
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self.held_note)
        body_layout.addWidget(self.subtitle)
        body_layout.addWidget(self.draft_twins)
        body_layout.addLayout(top)
        body_layout.addWidget(self.preset_note)
        body_layout.addWidget(self.save_note)
        body_layout.addWidget(self.tabs, 1)
        self.needs_pair = NeedsPair(selection, body, "to edit its recipes")
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(self.needs_pair, 1)
        # Only a visible page loads (showEvent does it otherwise): a broken recipe
        # must not pop up over the Pair page, which says so in its card.
        selection.changed.connect(self._on_pair_changed)
        self._update_state()

    def _action(
        self, text: str, keys: Sequence[QKeySequence], slot: Callable[[], object]
    ) -> QAction:
        action = QAction(text, self)
        if keys:
            action.setShortcuts(list(keys))
            # While the page is shown, wherever the focus is (a click in the sidebar
            # keeps it there; Apply Preset takes none); a hidden page takes no key.
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
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
        return any(e.dirty for e in self.editors) or self.sides.dirty()

    def _unsaved_paths(self) -> list[Path]:
        paths = [e.path for e in self.editors if e.dirty and e.path is not None]
        paths += self.sides.unsaved_paths()
        return paths

    def confirm_pair_change(
        self,
        parent: QWidget,
        wanted: Pair,
        go_on: Callable[[], None],
        keep: Callable[[], None],
    ) -> None:
        """Asked by the window before another pair is chosen, wherever: with unsaved
        edits, save or discard them first, or keep the pair (asking later, when this page
        is next shown, left Chat and Tune on the new pair while the edits sat unsaved)."""
        if not self.has_unsaved():
            go_on()
            return
        unsaved = self._unsaved_paths()

        def save() -> None:
            self.save()
            # A save refused (an error, a file changed on disk) keeps the pair: its
            # edits are still here, unsaved.
            (keep if self.has_unsaved() else go_on)()

        def discard() -> None:
            for editor in self.editors:
                if editor.dirty:
                    editor.revert()
                    self._after_reread()
            self.sides.reread("Revert", changed_only=False)
            go_on()

        self._question = ask_before_switch(parent, unsaved, wanted, save, discard, keep)

    # -- loading --------------------------------------------------------------------------

    def _on_pair_changed(self) -> None:
        if self.isVisible():
            self.load_selection()

    @property
    def chosen(self) -> Pair:
        return (self.selection.target, self.selection.draft)

    def load_selection(self) -> None:
        """Show the chosen pair's recipes; with unsaved edits of the pair shown, ask
        first (they stay open, said above the tabs, until saved, reverted or discarded)."""
        if self.chosen == self._loaded:
            return
        if not self.has_unsaved():
            self._load_pair()
            return
        if self._question is not None and self._question.isVisible():
            return  # one question at a time
        unsaved = self._unsaved_paths()
        self._question = ask_to_leave(
            self, unsaved, self.chosen, self._save_and_open, self._load_pair
        )
        self._update_state()

    def _save_and_open(self) -> None:
        self.save()  # once nothing is left unsaved, _update_state opens the chosen pair

    def _follow_selection(self) -> None:
        self._follow_pending = False
        if self.isVisible() and not self.has_unsaved():
            self.load_selection()

    def _load_pair(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        self._loaded = (target, draft)
        self._saved = []
        if target is None or draft is None:
            for editor in self.editors:
                editor.clear()
            self.sides.clear()
            self.subtitle.setText("")  # NeedsPair says what to do
            self._refresh_twins()
            self._update_state()
            return
        recipe = draft_recipe_path(draft)
        self.subtitle.setText(
            f"On the phone: the pack's recipes, what a push sends. Draft {draft.name}: "
            f"{recipe}\nTarget {target.name}: {target / TARGET_CONFIG}\nOn this computer: "
            "each tab's “On this computer” group, applied over the recipe when DraftDeck "
            "runs the pack here (never pushed). What you save here is what Chat and Tune "
            "use next."
        )
        for editor, path in (
            (self.draft_editor, recipe),
            (self.target_editor, target / TARGET_CONFIG),
        ):
            try:
                editor.load(path)
            except FileError as exc:
                editor.clear()
                show_file_error(self, "Cannot open recipe", exc)
        self.sides.load(target, draft, recipe.name)
        self._refresh_twins()
        self._fill_presets(draft)
        self._update_state()

    def _refresh_twins(self) -> None:
        """Read the draft's recipe files again: the line above the tabs, and the twin
        the draft editor saves in step (none when they differ: the user chooses)."""
        draft = self._loaded[1]
        recipes = self.draft_twins.show_pack(draft)
        editor = self.draft_editor
        editor.twins = []
        if recipes is None or editor.path != recipes.used:
            return
        try:
            editor.twins = [RecipeDocument.load(path) for path in recipes.in_step()[1:]]
        except FileError:  # changed between the two reads: say so instead
            self.draft_twins.show_pack(draft)

    def _on_made_same(self, replaced: Path, kept: Path) -> None:
        editor = self.draft_editor
        try:
            if editor.doc is None:  # it could not be read: now it can
                editor.load(replaced)
            elif editor.path == replaced:
                editor.reread(f"Keep {kept.name}")
        except FileError as exc:
            show_file_error(self, "Cannot open recipe", exc)
        self._refresh_twins()
        self._update_state()

    def _fill_presets(self, draft: Path) -> None:
        presets = draft_presets(draft)
        fill_presets(self.preset_combo, presets)
        for editor in self.editors:  # to start a file the pack does not have
            editor.missing.set_presets(presets)

    def showEvent(self, event: QShowEvent) -> None:
        self.load_selection()
        # Files changed elsewhere (Tune's "Apply Best", another editor) are re-read,
        # unless there are unsaved edits here: saving then asks before overwriting.
        for editor in self.editors:
            if editor.doc is not None and not editor.dirty and editor.doc.changed_on_disk():
                editor.revert()
        # The side files too (Chat's switch, --adaptive, Tune's Apply): as the recipes.
        self.sides.reread("changed on disk", changed_only=True)
        self._refresh_twins()
        self._update_state()
        super().showEvent(event)

    # -- actions --------------------------------------------------------------------------

    def _on_index_changed(self, index: int) -> None:
        self._update_state()

    def _update_state(self) -> None:
        # The previous pair's files, kept open for their edits: say so; once nothing is
        # unsaved (saved, reverted, undone), open the chosen pair's. Later, not in the
        # middle of a save or an undo that is still changing the editors.
        held = self.chosen != self._loaded and self.has_unsaved()
        self.held_note.setText(held_text(self._loaded, self.chosen) if held else "")
        self.held_note.setVisible(held)
        if self.chosen != self._loaded and not held and not self._follow_pending:
            self._follow_pending = True
            QTimer.singleShot(0, self, self._follow_selection)
        editor = self.current_editor()
        self.act_undo.setEnabled(editor.can_undo())
        self.act_redo.setEnabled(editor.can_redo())
        # What undo takes back goes in the tooltip: a long name would push the toolbar's
        # last buttons into its overflow menu.
        undo, redo = editor.undo_text(), editor.undo_stack.redoText()
        self.act_undo.setToolTip(" ".join(w for w in ("Undo", undo, "(Ctrl+Z)") if w))
        self.act_redo.setToolTip(" ".join(w for w in ("Redo", redo, "(Ctrl+Shift+Z)") if w))
        self.draft_twins.set_editing(self.draft_editor.dirty)
        self.act_save.setEnabled(self.has_unsaved())
        self.unsaved_changed.emit(self.has_unsaved())
        self.act_revert.setEnabled(editor.dirty or self._drafting_dirty_in(editor))
        offer_reset(self.act_reset, editor, "Draft" if editor is self.draft_editor else "Target")
        # A file the pack does not have offers its own preset list to start it from:
        # one list on the page, not two.
        starting = editor.doc is not None and editor.missing_file
        self.presets.setVisible(not starting)
        self.preset_note.setVisible(not starting)
        # A preset rewrites both files' JSON: not over text that does not parse yet.
        parsed = all(e.json_error is None for e in self.editors)
        self.act_preset.setEnabled(
            self.preset_combo.count() > 0 and editor.doc is not None and parsed
        )
        names = ("Draft recipe", "Target settings")
        for index, name in enumerate(names):
            tab = self.editors[index]
            marker = " •" if tab.dirty or self._drafting_dirty_in(tab) else ""
            self.tabs.setTabText(index, name + marker)
        unsaved = [name.lower() for name, e in zip(names, self.editors, strict=True) if e.dirty]
        unsaved += self.sides.unsaved_names()
        if unsaved:
            self._saved = []
            self.save_note.setText(
                f"● Unsaved changes in the {' and the '.join(unsaved)}. Chat and Tune use the "
                "saved files; Save (Ctrl+S) writes them."
            )
        elif self._saved:
            self.save_note.setText(f"✓ Saved {' and '.join(self._saved)} at {self._saved_at}.")
        else:
            self.save_note.setText("")

    def _drafting_dirty_in(self, editor: RecipeEditor) -> bool:
        """The side files shown in this editor's tab have unsaved edits."""
        return self.sides.dirty_in(editor)

    def undo(self) -> None:
        self.current_editor().undo()

    def redo(self) -> None:
        self.current_editor().redo()

    def apply_selected_preset(self) -> None:
        preset = self.presets.chosen()
        if preset is not None:
            self.sides.apply_preset(preset)

    def save(self) -> None:
        self._saved = []
        for editor in self.editors:
            editor.sync_from_json()  # JSON typed a moment ago counts
            if editor.dirty:
                self._save_one(editor)
        for group in self.sides.all:
            if group.dirty:
                self._save_side(group)
        self._update_state()

    def _save_one(self, editor: RecipeEditor, overwrite: bool = False) -> None:
        try:
            self._note_saved(editor.save(overwrite_changes=overwrite))
        except OutOfStepError as exc:
            self._note_saved([] if editor.path is None else [editor.path])
            show_file_error(self, "Draft recipes out of step", exc)
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
        if editor is self.draft_editor:
            self._refresh_twins()
        self._update_state()

    def _save_side(self, group: SideGroup, overwrite: bool = False) -> None:
        what = group.unsaved_name.capitalize()
        try:
            saved = group.save(overwrite_changes=overwrite)
            self._note_saved([] if saved is None else [saved])
        except ChangedOnDiskError as exc:
            ask(
                self,
                f"{what} changed on disk",
                f"{exc.path} was changed elsewhere (Chat's Adaptive drafting switch, Tune's "
                "Apply, the command line, another program) since it was opened.\n\n"
                "Overwrite it with your version? (Revert instead to see theirs.)",
                "Overwrite",
                lambda: self._save_side(group, overwrite=True),
            )
        except FileError as exc:
            show_file_error(self, f"{what} not saved", exc)
        self._update_state()

    def _note_saved(self, paths: list[Path]) -> None:
        for path in paths:
            self._saved.append(f"{path.parent.name}/{path.name}")
            self._saved_at = f"{datetime.now():%H:%M}"

    def revert(self) -> None:
        editor = self.current_editor()
        ask_to_revert(self, editor, self._after_reread, self.sides.of[editor])

    def move_to_computer(self) -> None:
        """Desktop values out of both recipes into "On this computer", asked first."""
        self._question = ask_to_move(self, self.sides.desktops, self._update_state)

    def _after_reread(self) -> None:
        """A file was read again: the draft's recipe files are read again too."""
        self._refresh_twins()
        self._update_state()

    def reset_to_pack(self) -> None:
        ask_to_reset(self, self.current_editor(), self._after_reread)
