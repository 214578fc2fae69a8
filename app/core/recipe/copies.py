"""Where DraftDeck keeps its own copies of a pack's recipe: the version before the last
save (`<name>.bak`) and what the pack shipped (for Reset to Pack Default).

A pack DraftDeck put in place (downloaded or imported into its library folder) keeps them
beside the recipe: `<name>.bak` and `.draftdeck-original/<name>`. A pack added by
reference is the user's own folder, often a git checkout where every extra file shows as
a change: there DraftDeck writes only the recipe the user saves, and keeps its copies in
its data folder, one folder per pack. A referenced pack that already holds a
`.draftdeck-original/` copy (kept by an earlier DraftDeck) goes on using it: that copy is
what the pack shipped, and the recipe beside it may be edited since.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object
from app.core.infra.paths import app_dirs
from app.core.infra.settings import Settings, settings_path
from app.core.pack.files import BACKUP_SUFFIX, ORIGINALS

COPIES = "recipe-copies"  # in the data folder, for packs added by reference
ORIGINAL = "original"  # in a pack's folder there: the recipes as the pack shipped them


def _key(folder: Path) -> str:
    return os.path.normcase(str(folder.resolve()))


def is_referenced(pack: Path) -> bool:
    """The pack was added by reference (the library's references in the settings file;
    read without the side effects of loading settings: a broken file just means no)."""
    try:
        references = Settings.from_json(read_json_object(settings_path())).references
    except FileError:
        return False
    wanted = _key(pack)
    return any(_key(Path(reference)) == wanted for reference in references)


def copies_folder(pack: Path) -> Path | None:
    """DraftDeck's folder for a referenced pack's copies; None: they go in the pack."""
    if not is_referenced(pack):
        return None
    digest = hashlib.sha256(_key(pack).encode("utf-8")).hexdigest()[:12]
    return app_dirs().data / COPIES / f"{pack.name}-{digest}"


def backup_path(recipe: Path) -> Path:
    """Where the version before the last save is kept."""
    folder = copies_folder(recipe.parent)
    return (folder or recipe.parent) / (recipe.name + BACKUP_SUFFIX)


def original_path(recipe: Path) -> Path:
    """Where what the pack shipped is kept, or will be at the first save."""
    in_pack = recipe.parent / ORIGINALS / recipe.name
    folder = copies_folder(recipe.parent)
    if folder is None or in_pack.is_file():  # an earlier DraftDeck's copy counts
        return in_pack
    return folder / ORIGINAL / recipe.name
