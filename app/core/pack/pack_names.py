"""The one rule for what a pack is called in a list (Library, Pair, Measure Pack, Phone):
its folder's name, and where two packs share a name, where each lives, so that no list
shows two rows alike ("smol-draft-q4 (library)", "smol-draft-q4 (linked: ~/x)").

Labels are worked out over the whole library, not per list: a pack is called the same
in every list, whichever of its twins that list happens to show.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the library reads its names from here
    from app.core.pack.library import PackEntry


def display_names(entries: Iterable[PackEntry]) -> dict[Path, str]:
    """A label per pack folder: the plain name unless another pack has the same name
    (compared case-blind, as Windows and macOS folders are)."""
    by_name: dict[str, list[PackEntry]] = {}
    for entry in {e.path: e for e in entries}.values():
        by_name.setdefault(entry.name.casefold(), []).append(entry)
    labels: dict[Path, str] = {}
    for same in by_name.values():
        for entry in same:
            labels[entry.path] = entry.name if len(same) == 1 else f"{entry.name} ({place(entry)})"
    return labels


def place(entry: PackEntry) -> str:
    """Where a pack lives, in a few words: the library folder, or the folder a linked
    pack sits in (home shortened to ~). Two linked packs of one name sit in different
    folders, so the words differ too."""
    if not entry.by_reference:
        return "library"
    return f"linked: {home_short(entry.path.parent)}"


def home_short(path: Path) -> str:
    """`path` with the user's home folder written as ~."""
    home = Path.home()
    if path.is_relative_to(home):
        rest = path.relative_to(home)
        return "~" if rest == Path() else f"~{os.sep}{rest}"
    return str(path)
