"""The Recipes page's "Move to This Computer": the desktop values in the recipes shown
(core/recipe/desktop_move.py says which) go to the tab's "On this computer" group and
the recipe gets what the pack shipped, asked first, as one undoable step per tab; Save
writes them, as any edit on the page. A preset meant for this computer ("Desktop CPU")
is applied the same way: its desktop keys to "On this computer", the rest to the recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QMessageBox, QWidget

from app.core.recipe.desktop_move import Move, moved, recipe_moves, shipped_keys, to_computer
from app.core.recipe.presets import Preset
from app.ui.base.dialogs import ask, show_error
from app.ui.recipes.recipe_desktop import DesktopGroup
from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_missing import preset_values

TEXT = "Move to this computer"


def tab_moves(editor: RecipeEditor, group: DesktopGroup) -> list[Move]:
    """The desktop values in the editor's recipe as it holds it (unsaved edits too)."""
    if editor.doc is None or group.doc is None or editor.json_error is not None:
        return []
    shipped = shipped_keys(editor.doc.path)
    data = editor.data
    return recipe_moves(
        editor.doc.path.name, data, shipped if shipped is not None else data, group.keys()
    )


def ask_to_move(
    parent: QWidget, tabs: Sequence[tuple[RecipeEditor, DesktopGroup]], done: Callable[[], None]
) -> QMessageBox | None:
    """List the moves of every tab and make them once agreed; then `done`."""
    found = [(editor, group, tab_moves(editor, group)) for editor, group in tabs]
    found = [(e, g, moves) for e, g, moves in found if moves]
    if not found:
        show_error(
            parent,
            "Nothing to move",
            "The recipes hold no desktop values: no thread count, precision, memory mode or "
            "backend unlike what the pack shipped, and no memory normal.",
        )
        return None
    listing = "\n".join(
        f"{e.doc.path.parent.name}/{m.text()}" for e, _, moves in found for m in moves if e.doc
    )

    def move() -> None:
        for editor, group, moves in found:
            editor.undo_stack.beginMacro(TEXT)
            editor.set_data(moved(editor.data, moves), TEXT)
            group.set_values(to_computer(moves), TEXT)
            editor.undo_stack.endMacro()
        done()

    return ask(
        parent,
        "Move to This Computer",
        "These values are this computer's, not the phone's: they go to “On this computer” "
        "and the recipes get what the pack shipped. What runs here stays the same; Save "
        f"writes it, Undo takes it back.\n\n{listing}",
        "Move",
        move,
    )


def apply_here(editor: RecipeEditor, group: DesktopGroup, preset: Preset) -> None:
    """A preset for this computer as one undoable step: the keys the group holds go to
    it, the others (the sampler) to the recipe."""
    values = preset_values(preset, editor.scope)
    here = {k: v for k, v in values.items() if k in group.editors}
    rest = {k: v for k, v in values.items() if k not in group.editors}
    text = f"Preset: {preset.name}"
    editor.undo_stack.beginMacro(text)
    if rest:
        editor.set_data({**editor.data, **rest}, text)
    group.set_values(here, text)
    editor.undo_stack.endMacro()
