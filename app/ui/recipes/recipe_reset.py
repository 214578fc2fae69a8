"""Putting a recipe file back, asked first: Revert (the file as it is on disk) and Reset
(the file as the pack shipped it, the current one kept as a backup), and what Reset
offers for the file shown."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from app.core.infra.errors import FileError
from app.core.recipe.draft_recipes import DIFFER, SAME, draft_recipes
from app.core.recipe.files import backup_path
from app.ui.base.dialogs import ask, show_error, show_file_error
from app.ui.recipes.recipe_desktop import DesktopGroup
from app.ui.recipes.recipe_drafting import DraftingGroup
from app.ui.recipes.recipe_editor import RecipeEditor


def offer_reset(action: QAction, editor: RecipeEditor, shown: str) -> None:
    """Reset puts back one file, the visible tab's (`shown`): the action says which. A file
    as the pack shipped it, with no edits open, has nothing to reset."""
    on_disk = editor.doc is not None and editor.doc.on_disk
    shipped = on_disk and not editor.dirty and editor.as_shipped()
    action.setEnabled(on_disk and not shipped)
    action.setText(f"Reset {shown} to Pack Default")
    name = editor.path.name if editor.path else "this file"
    action.setToolTip(
        f"{name} is already as the pack shipped it"
        if shipped
        else f"Put back {name} as the pack shipped it; the other tab's file is left as it is"
    )


def ask_to_revert(
    parent: QWidget,
    editor: RecipeEditor,
    done: Callable[[], None],
    sides: Sequence[DraftingGroup | DesktopGroup] = (),
) -> None:
    """Throw away the editor's unsaved changes once agreed, and those of the side files
    shown with it (this computer's settings, the draft's drafting settings); then `done`."""
    if editor.path is None:
        return
    dirty = [group for group in sides if group.dirty]
    files = [editor.path] if editor.dirty or not dirty else []
    files += [group.path for group in dirty if group.path is not None]

    def revert() -> None:
        editor.revert()
        for group in dirty:
            group.reread("Revert")
        done()

    ask(
        parent,
        "Revert recipe",
        f"Throw away unsaved changes to {' and '.join(str(f) for f in files)}?",
        "Revert",
        revert,
    )


def ask_to_reset(parent: QWidget, editor: RecipeEditor, done: Callable[[], None]) -> None:
    """Put back the editor's file as the pack shipped it once agreed; then `done` (also
    when there was nothing to reset, not when the reset failed)."""
    if editor.path is None:
        return
    path = editor.path
    also, with_twins = "", False
    if editor.twins:
        # Compared now, on disk: the twins were found alike when the pair was opened,
        # and another program (or the user by hand) may have changed one since.
        recipes = draft_recipes(path.parent)
        other = recipes.other.name if recipes.other is not None else ""
        with_twins = recipes.state == SAME
        if with_twins:
            also = f"\n\n{other} holds the same recipe and is reset with it."
        elif recipes.state == DIFFER:
            also = (
                f"\n\n{other} holds a different recipe ({recipes.summary()}); it is left as it is."
            )

    def reset() -> None:
        try:
            restored = editor.reset_to_pack(with_twins)
        except FileError as exc:
            show_file_error(parent, "Reset failed", exc)
            return
        if not restored:
            show_error(
                parent,
                "Nothing to reset",
                f"{path} has not been edited by DraftDeck, so it is as the pack shipped it.",
            )
        done()

    ask(
        parent,
        "Reset to pack default",
        f"Replace {path} with the version the pack shipped? The current file is kept "
        f"as {backup_path(path)}.{also}",
        "Reset",
        reset,
    )
