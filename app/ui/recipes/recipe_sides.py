"""The Recipes page's side files: DraftDeck's own settings shown under each tab's recipe
rows and kept on its undo stack, one tab one history: "On this computer" for both packs
(recipe_desktop.py; the draft length is the target's, so the draft's group has none),
then the draft pack's "Drafting (DraftDeck)" (recipe_drafting.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.core.recipe.desktop_settings import DESKTOP_KEYS
from app.core.recipe.files import TARGET_CONFIG
from app.core.recipe.presets import Preset
from app.ui.recipes.recipe_desktop import DesktopGroup
from app.ui.recipes.recipe_drafting import DraftingGroup
from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_move import apply_here

SideGroup = DesktopGroup | DraftingGroup


class SideFiles:
    def __init__(
        self, draft_editor: RecipeEditor, target_editor: RecipeEditor, changed: Callable[[], None]
    ) -> None:
        draft_keys = tuple(k for k in DESKTOP_KEYS if k != "draft_predict_length")
        self.draft_desktop = DesktopGroup(draft_editor.undo_stack, draft_keys)
        self.target_desktop = DesktopGroup(target_editor.undo_stack, DESKTOP_KEYS)
        self.drafting = DraftingGroup(draft_editor.undo_stack)
        self.of: dict[RecipeEditor, list[SideGroup]] = {
            draft_editor: [self.draft_desktop, self.drafting],
            target_editor: [self.target_desktop],
        }
        self.desktops = [(draft_editor, self.draft_desktop), (target_editor, self.target_desktop)]
        for editor, groups in self.of.items():
            for group in groups:
                group.state_changed.connect(changed)
                editor.form.add_section(group)
        for editor, desktop in self.desktops:
            # The recipe's checks say what runs here with this computer's settings, and
            # the group's unset rows what the recipe leaves in force.
            editor.here = desktop.keys
            editor.state_changed.connect(lambda e=editor, d=desktop: d.show_phone(e.data))
            desktop.state_changed.connect(editor.refresh_checks)

    @property
    def all(self) -> list[SideGroup]:
        return [group for groups in self.of.values() for group in groups]

    def dirty(self) -> bool:
        return any(group.dirty for group in self.all)

    def dirty_in(self, editor: RecipeEditor) -> bool:
        """The side files shown in this editor's tab have unsaved edits."""
        return any(group.dirty for group in self.of[editor])

    def unsaved_paths(self) -> list[Path]:
        return [g.path for g in self.all if g.dirty and g.path is not None]

    def unsaved_names(self) -> list[str]:
        return list(dict.fromkeys(g.unsaved_name for g in self.all if g.dirty))

    def clear(self) -> None:
        for group in self.all:
            group.clear()

    def load(self, target: Path, draft: Path, draft_recipe: str) -> None:
        """The pair's side files; after the recipes (their load clears the undo stack)."""
        self.draft_desktop.load(draft, draft_recipe)
        self.target_desktop.load(target, TARGET_CONFIG)
        for editor, desktop in self.desktops:
            desktop.show_phone(editor.data)
            editor.refresh_checks()
        self.drafting.load(draft)

    def reread(self, text: str, changed_only: bool) -> None:
        """Read again the files with unsaved edits (Revert), or, `changed_only`, those
        without edits that changed on disk (Chat's switch, Tune's Apply)."""
        for group in self.all:
            if changed_only and not group.dirty and group.changed_on_disk():
                group.reread(f"{group.unsaved_name.capitalize()} {text}")
            elif not changed_only and group.dirty:
                group.reread(text)

    def apply_preset(self, preset: Preset) -> None:
        """A preset into both tabs; one meant for this computer ("Desktop CPU") sets its
        desktop keys here, not in the phone's recipes (recipe_move.apply_here)."""
        for editor, desktop in self.desktops:
            if editor.doc is None:
                continue
            if preset.this_computer and desktop.doc is not None:
                apply_here(editor, desktop, preset)
            else:
                editor.apply_preset(preset)
