"""The words of the Recipes page when the pair changes under unsaved edits: the question
(save them, discard them, or keep them open), and the line that says, for as long as
they stay open, that these are not the chosen pair's recipes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from app.ui.base.dialogs import choose

Pair = tuple[Path | None, Path | None]  # target, draft


def pair_words(pair: Pair) -> str:
    target, draft = pair
    if target is None or draft is None:
        return "no pair"
    return f"draft {draft.name} with target {target.name}"


def held_text(shown: Pair, chosen: Pair) -> str:
    """The line above the tabs while the previous pair's edits are kept open."""
    return (
        f"● These are the recipes of the previous pair ({pair_words(shown)}), kept open for "
        f"their unsaved changes. Chat and Tune use the chosen pair ({pair_words(chosen)}): "
        "Save or Revert these changes to open its recipes."
    )


def ask_to_leave(
    parent: QWidget,
    unsaved: Sequence[Path],
    chosen: Pair,
    save: Callable[[], None],
    discard: Callable[[], None],
) -> QMessageBox:
    """Save or discard the unsaved recipes and open the chosen pair's; Cancel keeps them."""
    files = "\n".join(str(path) for path in unsaved)
    return choose(
        parent,
        "Unsaved recipe changes",
        f"The pair is now {pair_words(chosen)}, but these recipes of the previous pair have "
        f"unsaved changes:\n{files}\n\nSave them or discard them, and open the new pair's "
        "recipes? Cancel keeps them open here.",
        [("Save and Open", save), ("Discard and Open", discard)],
    )


def ask_before_switch(
    parent: QWidget,
    unsaved: Sequence[Path],
    wanted: Pair,
    save: Callable[[], None],
    discard: Callable[[], None],
    keep: Callable[[], None],
) -> QMessageBox:
    """Asked the moment another pair is chosen: until answered, Chat and Tune still use
    the pair in use; Cancel keeps it (and the edits)."""
    files = "\n".join(str(path) for path in unsaved)
    return choose(
        parent,
        "Unsaved recipe changes",
        f"These recipes of the pair in use have unsaved changes:\n{files}\n\nSave them or "
        f"discard them, and switch to {pair_words(wanted)}? Cancel keeps the pair in use "
        "and the changes.",
        [("Save and Switch", save), ("Discard and Switch", discard)],
        on_cancel=keep,
    )
