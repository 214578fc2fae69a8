"""A draft pack with two recipes: config_cpu.json and draft_config_cpu.json beside it.

Packs often ship both (TokForge's does). The engine runs one of them
(`files.draft_recipe_path`); the phone app may read the other. So the two must never
drift apart without the user knowing:

- the same recipe (equal parsed JSON, whatever the spacing or key order): a save writes
  both in step (`save_all`), each atomically with its own .bak;
- different recipes: nothing picks one silently. Callers show `DraftRecipes.diff` and
  let the user choose which to keep (`make_same`) or name the file to change.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.pack.files import DRAFT_RECIPE, DRAFT_RECIPE_ALT
from app.core.recipe.files import ChangedOnDiskError, RecipeDocument, draft_recipe_path
from app.core.recipe.save_lock import saving

DRAFT_RECIPE_NAMES = (DRAFT_RECIPE, DRAFT_RECIPE_ALT)
ALONE, SAME, DIFFER = "alone", "same", "differ"  # one file (or none); both alike; not


class OutOfStepError(FileError):
    """A save wrote some of the files it had to and not the rest: they now differ."""

    code = "recipes_out_of_step"


@dataclass(frozen=True)
class KeyDifference:
    key: str
    used: Any  # the value in the file the engine runs (None when not set there)
    other: Any
    in_used: bool  # set in that file at all
    in_other: bool

    def text(self, used: str, other: str) -> str:
        def side(present: bool, value: Any, name: str) -> str:
            return f"{json.dumps(value) if present else '(not set)'} in {name}"

        return (
            f"{self.key}: {side(self.in_used, self.used, used)}, "
            f"{side(self.in_other, self.other, other)}"
        )


@dataclass(frozen=True)
class DraftRecipes:
    """A draft pack's recipe files as they are on disk now."""

    used: Path  # what the engine runs with (may not exist yet)
    other: Path | None  # the second recipe, when the pack has both
    state: str  # ALONE, SAME or DIFFER
    differences: tuple[KeyDifference, ...] = ()
    unreadable: str = ""  # why one of the two cannot be compared (state DIFFER)
    diff: str = ""  # unified diff of the two, keys sorted (state DIFFER)

    def rule_text(self) -> str:
        """Which file the engine runs, and what becomes of the other (callers add how to
        choose when they differ)."""
        used = self.used.name
        if self.other is None:
            if not self.used.is_file():
                return f"No draft recipe yet: saving creates {used}, which DraftDeck runs."
            alone = f" (the pack has no {DRAFT_RECIPE})" if used != DRAFT_RECIPE else ""
            return f"DraftDeck runs the draft with {used}{alone}."
        line = (
            f"DraftDeck runs the draft with {used}: when a pack has both, always that one. "
            f"The pack's {self.other.name} "
        )
        if self.state == SAME:
            return line + "holds the same recipe: saving writes both in step."
        return line + f"differs from it: {self.summary()}."

    def summary(self) -> str:
        if self.unreadable:
            return self.unreadable
        assert self.other is not None
        return "; ".join(d.text(self.used.name, self.other.name) for d in self.differences)

    def in_step(self) -> list[Path]:
        """The files a save of the draft recipe writes: the twin too when they agree."""
        if self.state == SAME and self.other is not None:
            return [self.used, self.other]
        return [self.used]


def _load(path: Path) -> tuple[dict[str, Any] | None, str, str]:
    """Parsed data (None when it does not parse), raw text, and the problem."""
    try:
        doc = RecipeDocument.load(path)
    except FileError as exc:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return None, text, f"{path.name} cannot be read ({exc.problem})"
    return doc.data, doc.text, ""


def _canonical(data: dict[str, Any]) -> str:
    # Sorted keys: key order and spacing are not differences in what MNN reads.
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def draft_recipes(pack: Path) -> DraftRecipes:
    used = draft_recipe_path(pack)
    other_name = DRAFT_RECIPE_ALT if used.name == DRAFT_RECIPE else DRAFT_RECIPE
    other = pack / other_name
    if not (used.is_file() and other.is_file()):
        return DraftRecipes(used, None, ALONE)
    (a, a_text, a_problem), (b, b_text, b_problem) = _load(used), _load(other)
    if a is not None and b is not None and a == b:
        return DraftRecipes(used, other, SAME)
    texts = (_canonical(a), _canonical(b)) if a is not None and b is not None else (a_text, b_text)
    diff = "".join(
        difflib.unified_diff(
            texts[0].splitlines(keepends=True),
            texts[1].splitlines(keepends=True),
            used.name,
            other.name,
        )
    )
    differences: list[KeyDifference] = []
    if a is not None and b is not None:
        for key in sorted(set(a) | set(b)):
            if a.get(key, ...) != b.get(key, ...):
                differences.append(KeyDifference(key, a.get(key), b.get(key), key in a, key in b))
    unreadable = "; ".join(p for p in (a_problem, b_problem) if p)
    return DraftRecipes(used, other, DIFFER, tuple(differences), unreadable, diff)


def save_all(
    saves: Sequence[tuple[RecipeDocument, dict[str, Any]]], overwrite_changes: bool = False
) -> None:
    """Save each document with its data, in order. Every file is checked for changes by
    other programs before any is written, so such a refusal writes nothing. A write that
    fails after an earlier one succeeded raises OutOfStepError saying which file holds
    what (each save is atomic, so every file holds one whole version). Other saves of
    these files wait until all are written (save_lock.py)."""
    with saving(*(doc.path for doc, _ in saves)):
        _save_each(saves, overwrite_changes)


def _save_each(
    saves: Sequence[tuple[RecipeDocument, dict[str, Any]]], overwrite_changes: bool
) -> None:
    if not overwrite_changes:
        for doc, _ in saves:
            if doc.changed_on_disk():
                raise ChangedOnDiskError(
                    doc.path, "was changed by another program since it was opened"
                )
    saved: list[Path] = []
    for doc, data in saves:
        try:
            doc.save(data, overwrite_changes=overwrite_changes)
        except FileError as exc:
            if not saved:
                raise
            names = " and ".join(p.name for p in saved)
            raise OutOfStepError(
                doc.path,
                f"not saved ({exc.problem}). {names} {'holds' if len(saved) == 1 else 'hold'} "
                f"the new recipe; {doc.path.name} still holds the one before, so the two "
                "now differ. Fix the problem and save again, or choose which to keep.",
            ) from exc
        saved.append(doc.path)


def save_in_step(
    doc: RecipeDocument,
    twins: Sequence[RecipeDocument],
    data: dict[str, Any],
    overwrite_changes: bool = False,
) -> None:
    """Save `data` into `doc` and the same recipe into each twin (see `save_all`). A
    twin keeps its own key order (new keys go last) as it keeps its own indentation."""
    saves = [(doc, data), *((twin, _in_order_of(twin, data)) for twin in twins)]
    save_all(saves, overwrite_changes)


def _in_order_of(doc: RecipeDocument, data: dict[str, Any]) -> dict[str, Any]:
    kept = {key: data[key] for key in doc.data if key in data}
    return kept | {key: value for key, value in data.items() if key not in kept}


def make_same(keep: Path, replace: Path) -> None:
    """Copy `keep`'s recipe into `replace` (in `replace`'s own spacing; atomic, with
    `replace`'s .bak): the user's answer to two recipes that differ."""
    data = RecipeDocument.load(keep).data
    RecipeDocument.replacing(replace).save(data, overwrite_changes=True)
