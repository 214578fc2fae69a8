"""Writing a made pack's files into its folder without losing anyone else's.

runtime_config.json and README.md are replaced freely only when DraftDeck wrote them
(their marks: measured.WRITTEN_BY, card.CARD_MARK). One written by TokForge or a person
is replaced only when the user says so (`force`), and is then kept beside as
`<name>.bak` (or `<name>.1.bak`, … when that name is taken: nothing is overwritten).

The draft recipe (config_cpu.json) is the phone's: it gets only what carries over to a
phone (the sampler measured, greedy), never what was measured on this computer. A pack
without one gets one; one the export wrote (its mark lists it) gets those keys set and
keeps its others; one DraftDeck did not write is kept unless `force`; one that already
says them is not touched at all. The thread count, precision and memory measured here go
to this computer's settings for the pack (recipe/desktop_settings.py, over that recipe
file), where the recipe does not already say them, so DraftDeck keeps running the pack as
it was measured and the phone's recipe keeps its own.
Files are written with the user's umask (shared): they are meant to be published.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.infra.errors import AlreadyExistsError, FileError
from app.core.infra.jsonfile import (
    atomic_write_json,
    atomic_write_text,
    read_json_object,
    read_text,
)
from app.core.pack.files import BACKUP_SUFFIX, DRAFT_RECIPE, DRAFT_RECIPE_ALT, RUNTIME_CONFIG
from app.core.packmaking.card import CARD, is_draftdeck_card
from app.core.packmaking.export_mark import made_by_export
from app.core.packmaking.measured import written_by_draftdeck
from app.core.recipe.copies import backup_path
from app.core.recipe.desktop_settings import (
    THIS_COMPUTER_FILE,
    read_desktop,
    settings_path,
    update_desktop,
)
from app.core.recipe.draft_recipes import draft_recipes, save_in_step
from app.core.recipe.files import RecipeDocument, draft_recipe_path, read_recipe


def _runtime_config_is_ours(path: Path) -> bool:
    try:
        return written_by_draftdeck(read_json_object(path))
    except FileError:
        return False  # unreadable or not an object: someone else's


def _card_is_ours(path: Path) -> bool:
    try:
        return is_draftdeck_card(read_text(path))
    except (FileError, UnicodeDecodeError):
        return False


def _made_by_export(path: Path) -> bool:
    return path.name in (made_by_export(path.parent) or set())


_UNSET = object()
MADE_FILES = (RUNTIME_CONFIG, CARD)  # the files a made pack gets that others may write too
OWNERSHIP: dict[str, Callable[[Path], bool]] = {
    RUNTIME_CONFIG: _runtime_config_is_ours,
    CARD: _card_is_ours,
    DRAFT_RECIPE: _made_by_export,
    DRAFT_RECIPE_ALT: _made_by_export,
}


@dataclass
class Written:
    """What a write did, for the user: files written and the copies kept."""

    files: list[Path] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # others' files left as they were
    # The keys set in each file written, so a reader sees which file each value went to.
    values: dict[Path, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # what could not be saved, and why


def what_file(path: Path) -> str:
    """What a written file is to a reader ("" for one its name says)."""
    if path.name == THIS_COMPUTER_FILE:
        return (
            "this computer's settings for the pack: measured here; DraftDeck runs the pack "
            "with them, a phone never gets them"
        )
    if path.name in (DRAFT_RECIPE, DRAFT_RECIPE_ALT):
        return "the draft's recipe, the phone's"
    return ""


def keys_words(done: Written, path: Path) -> str:
    """The keys set in the file `path` by the write ("" when none needs naming), so a
    reader sees which file each value went to."""
    return ", ".join(f"{k} {v}" for k, v in done.values.get(path, {}).items())


def foreign_files(pack: Path, names: tuple[str, ...] = MADE_FILES) -> list[Path]:
    """The files of `names` in the pack that DraftDeck did not write."""
    return [pack / n for n in names if (pack / n).exists() and not OWNERSHIP[n](pack / n)]


def refuse_foreign(pack: Path, force: bool, names: tuple[str, ...] = MADE_FILES) -> None:
    """Raise before any work when a file would replace one DraftDeck did not write."""
    if force:
        return
    for path in foreign_files(pack, names):
        raise AlreadyExistsError(
            path,
            "DraftDeck did not write this file, so it is not replaced: pass --force to "
            f"replace it (the old one is kept as {path.name}{BACKUP_SUFFIX})",
        )


def free_backup_name(path: Path) -> Path:
    candidate = path.with_name(path.name + BACKUP_SUFFIX)
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{number}{BACKUP_SUFFIX}")
        number += 1
    return candidate


def _replace(path: Path, write: Callable[[], None], force: bool, done: Written) -> None:
    if path.exists() and not OWNERSHIP[path.name](path):
        refuse_foreign(path.parent, force, (path.name,))
        backup = free_backup_name(path)
        shutil.copy2(path, backup)
        done.backups.append(backup)
    write()
    done.files.append(path)


def write_runtime_config(pack: Path, config: dict[str, Any], force: bool, done: Written) -> None:
    path = pack / RUNTIME_CONFIG
    _replace(path, lambda: atomic_write_json(path, config, indent=2, shared=True), force, done)


def write_card(pack: Path, text: str, force: bool, done: Written) -> None:
    path = pack / CARD
    _replace(path, lambda: atomic_write_text(path, text, shared=True), force, done)


def write_draft_recipe(pack: Path, measured: dict[str, Any], force: bool, done: Written) -> None:
    """The draft recipe with the `measured` keys that carry over to a phone (the module's
    rule), saved as the Recipes page saves
    it (core/recipe: the save lock, a change by another program refused, a .bak, the
    file's own key order and spacing). A twin draft_config_cpu.json that holds the same
    recipe is kept in step; one that differs is not touched."""
    recipes = draft_recipes(pack)
    doc = RecipeDocument.replacing(recipes.used)  # empty when absent or not a JSON object
    wanted = {**doc.data, **measured}
    if doc.on_disk and wanted == doc.data:
        return
    changed = {k: v for k, v in measured.items() if doc.data.get(k, _UNSET) != v}
    paths = recipes.in_step() if doc.on_disk else [recipes.used]
    if doc.on_disk and not force and not all(OWNERSHIP[p.name](p) for p in paths):
        done.kept.append(recipes.used)
        return
    twins = [RecipeDocument.replacing(p) for p in paths if p != recipes.used]
    save_in_step(doc, twins, wanted)
    done.files.extend(paths)
    for path in paths:
        done.values.setdefault(path, {}).update(changed)
    if doc.on_disk:  # each file saved over has its version before as .bak
        done.backups.extend(backup_path(p) for p in paths)


def write_this_computer(pack: Path, measured: dict[str, Any], done: Written) -> None:
    """The settings measured here (`measured`: thread_num, precision, memory) into this
    computer's settings for the pack, over the draft recipe the engine runs, for each key
    the recipe and those settings do not already give as measured. A settings file that
    cannot be used is left as it is, and said in `done.problems`."""
    name = draft_recipe_path(pack).name
    recipe = read_recipe(pack / name)
    path = settings_path(pack)
    try:
        current = read_desktop(pack).of(name)
        changes = {k: v for k, v in measured.items() if current.get(k, recipe.get(k)) != v}
        if changes:
            update_desktop(pack, name, changes)
    except FileError as exc:
        done.problems.append(
            f"{path.name} (this computer's settings) was not saved: {exc.problem}; DraftDeck "
            f"runs the pack here as {name} says"
        )
        return
    if changes:
        done.files.append(path)
        done.values.setdefault(path, {}).update(changes)
