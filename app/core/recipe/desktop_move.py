"""Move to this computer: the desktop values an earlier DraftDeck (or a user) wrote into a
pack's recipes go to this computer's settings, and the recipes get what the pack shipped.

Before this computer's settings existed, Tune's Apply and the desktop presets wrote
thread counts, `memory: normal` and the CPU backend into the pack's config.json and
config_cpu.json, the files a phone reads. Such packs keep working (what runs here is the
same after the move), and one action takes the desktop values out:

- a key among backend_type, thread_num, precision and memory whose value differs from
  what the pack shipped (the copy DraftDeck kept at its first save: copies.py) goes to
  this computer's settings for that recipe file, and the recipe gets the shipped value
  back, or loses the key when the shipped file had none;
- `memory: normal` in a recipe is always a desktop value (fp32 weights: an 8B target
  would need some 32 GB on a phone), shipped or not.
A key this computer's settings already hold keeps their value (it is what runs here);
the recipe still gets the shipped value back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.recipe.desktop_settings import (
    OVERLAID_FILES,
    DesktopSettings,
    desktop_value,
    read_desktop,
    restore_desktop,
    settings_path,
    update_desktop,
)
from app.core.recipe.files import RecipeDocument, original_text
from app.core.recipe.save_lock import saving

MOVABLE = ("backend_type", "thread_num", "precision", "memory")


@dataclass(frozen=True)
class Move:
    recipe: str  # the recipe file's name
    key: str
    value: Any  # the recipe's value now: what runs here, and goes to this computer
    shipped: Any  # what the recipe gets back; None: the key goes (the pack had none)
    kept_here: bool = False  # this computer's settings hold their own value already

    def text(self) -> str:
        """ "config.json thread_num 1 → this computer; the phone's recipe gets back 68"."""
        back = (
            "the key goes from the phone's recipe (the pack shipped none)"
            if self.shipped is None
            else f"the phone's recipe gets back {self.shipped} (as the pack shipped it)"
        )
        here = (
            "this computer keeps its own setting"
            if self.kept_here
            else f"{self.value} → this computer"
        )
        return f"{self.recipe} {self.key}: {here}; {back}"


def shipped_keys(recipe: Path) -> dict[str, Any] | None:
    """The recipe as the pack shipped it (the file itself if DraftDeck never saved it);
    None when that copy cannot be read as a JSON object."""
    try:
        text = original_text(recipe)
        data = json.loads(text) if text is not None else {}
    except (FileError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def recipe_moves(
    name: str, data: Mapping[str, Any], shipped: Mapping[str, Any], here: Mapping[str, Any]
) -> list[Move]:
    """The desktop values of the recipe `name` (its keys `data`, shipped as `shipped`,
    this computer's settings for it `here`), each with what the recipe gets back."""
    moves = []
    for key in MOVABLE:
        if key not in data:
            continue
        value, was = data[key], shipped.get(key)
        if (key in shipped and value == was) and not desktop_value(key, value):
            continue
        back = was if key in shipped and not desktop_value(key, was) else None
        moves.append(Move(name, key, value, back, key in here))
    return moves


def moved(data: Mapping[str, Any], moves: list[Move]) -> dict[str, Any]:
    """`data` with the shipped values back (in place: the file keeps its key order)."""
    out = dict(data)
    for move in moves:
        if move.shipped is None:
            out.pop(move.key, None)
        else:
            out[move.key] = move.shipped
    return out


def to_computer(moves: list[Move]) -> dict[str, Any]:
    """What this computer's settings get for the recipe the moves are of."""
    return {m.key: m.value for m in moves if not m.kept_here}


@dataclass
class PackMoves:
    pack: Path
    moves: dict[str, list[Move]] = field(default_factory=dict)  # recipe name -> its moves

    @property
    def all(self) -> list[Move]:
        return [m for moves in self.moves.values() for m in moves]


def pack_moves(pack: Path) -> PackMoves:
    """The moves of every recipe file of the pack. Raises FileError when a recipe or this
    computer's settings cannot be read (nothing can be moved safely then)."""
    here = read_desktop(pack)
    found = PackMoves(pack)
    for name in OVERLAID_FILES:
        recipe = pack / name
        if not recipe.is_file():
            continue
        data = RecipeDocument.load(recipe).data
        shipped = shipped_keys(recipe)
        moves = recipe_moves(name, data, shipped if shipped is not None else data, here.of(name))
        if moves:
            found.moves[name] = moves
    return found


# The files' contents before a move (None: no such file), for undo.
MoveSnapshot = dict[Path, dict[str, Any] | DesktopSettings | None]


def move_to_computer(pack: Path) -> tuple[PackMoves, MoveSnapshot]:
    """Make the moves, each recipe and this computer's settings read and written under
    their save locks as one step; returns what was moved and the files before."""
    recipes = [pack / name for name in OVERLAID_FILES]
    before: MoveSnapshot = {}
    with saving(*recipes, settings_path(pack)):
        found = pack_moves(pack)
        if not found.moves:
            return found, before
        before[settings_path(pack)] = read_desktop(pack)
        for name, moves in found.moves.items():
            doc = RecipeDocument.load(pack / name)
            before[doc.path] = dict(doc.data)
            doc.save(moved(doc.data, moves))
            values = to_computer(moves)
            if values:
                update_desktop(pack, name, values)
    return found, before


def undo_move(snapshot: MoveSnapshot) -> None:
    """Put the recipes and this computer's settings back as they were before the move."""
    for path, data in snapshot.items():
        if isinstance(data, DesktopSettings):
            restore_desktop(path.parent, data)
        elif data is not None:
            RecipeDocument.open_or_new(path).save(data, overwrite_changes=True)
