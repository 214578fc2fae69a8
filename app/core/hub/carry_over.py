"""What an update keeps from the installed copy: the user's edits and the user's files.

An update installs a new folder and removes the old one, so anything only the old one
held would be lost. After the swap, from the old copy:

- A JSON file the user changed (its bytes no longer match the hash recorded at install,
  whichever program edited it) stays in force when the update ships that file
  unchanged; the shipped version becomes the kept original, so Reset still works. When
  the update changes the file, the new version is in force and the user's is kept as
  `<name>.before-update`. Either way a note says so.
- Files the pack never shipped (recipe backups, earlier `.before-update` copies, the
  user's own notes) move across by rename; one whose name the update now uses is kept
  as `<name>.before-update`.

`carry_over` says whether everything came across; if not, the caller keeps the old copy.
"""

from __future__ import annotations

from pathlib import Path

from app.core.hub.plan import PlanFile, RepoPlan
from app.core.hub.transfer import matches_on_disk
from app.core.infra.errors import FileError
from app.core.infra.jsonfile import (
    JSON_SIZE_LIMIT,
    atomic_write_bytes,
    read_json_object,
    read_regular_bytes,
)
from app.core.pack.files import BEFORE_UPDATE_SUFFIX, ORIGINALS, SOURCE_FILE
from app.core.recipe.files import keep_original


def shipped_files(pack: Path) -> dict[str, PlanFile]:
    """The files (with hashes) DraftDeck installed in `pack`; empty when unrecorded."""
    try:
        record = read_json_object(pack / SOURCE_FILE).get("files")
        if not isinstance(record, list):
            return {}
        return {f.path: f for f in (PlanFile.from_json(item) for item in record)}
    except (FileError, KeyError, TypeError, ValueError, AttributeError):
        return {}  # a hand-edited record: treat every file as the user's own


def carry_over(
    old: Path, new: Path, shipped: dict[str, PlanFile], plan: RepoPlan
) -> tuple[list[str], bool]:
    """Bring the user's edits and files from `old` into `new`: notes for the user, and
    whether everything came across (else `old` still holds something of the user's)."""
    notes = _carry_edits(old, new, shipped, plan)
    own_notes, complete = _carry_own_files(old, new, shipped)
    return notes + own_notes, complete


def _same(a: PlanFile, b: PlanFile) -> bool:
    return (a.size, a.sha256, a.blob_id) == (b.size, b.sha256, b.blob_id)


def _carry_edits(old: Path, new: Path, shipped: dict[str, PlanFile], plan: RepoPlan) -> list[str]:
    incoming = {f.path: f for f in plan.files}
    notes: list[str] = []
    for name, before in sorted(shipped.items()):
        edited = old / name
        # Recipes and configs are JSON; weights are never edited by hand.
        if not name.endswith(".json") or not edited.is_file() or matches_on_disk(edited, before):
            continue
        try:
            mine = read_regular_bytes(edited, "recipe", JSON_SIZE_LIMIT)
        except FileError:
            continue
        after = incoming.get(name)
        if after is not None and _same(before, after):
            keep_original(new / name)  # the shipped text, for Reset
            atomic_write_bytes(new / name, mine)
            notes.append(f"{name}: your edits are kept (the update does not change this file)")
        else:
            kept = name + BEFORE_UPDATE_SUFFIX
            atomic_write_bytes(new / kept, mine)
            notes.append(f"{name}: the update changes this file; your edited copy is {kept}")
    return notes


def _carry_own_files(old: Path, new: Path, shipped: dict[str, PlanFile]) -> tuple[list[str], bool]:
    tops = {name.split("/")[0] for name in shipped}
    notes: list[str] = []
    complete = True
    for entry in sorted(old.iterdir()):
        # SOURCE_FILE is rewritten by every install; ORIGINALS belong to the old version.
        if entry.name in tops or entry.name in (SOURCE_FILE, ORIGINALS):
            continue
        target = new / entry.name
        if _taken(target):
            target = new / (entry.name + BEFORE_UPDATE_SUFFIX)
            if _taken(target):
                complete = False
                continue
            notes.append(
                f"{entry.name}: the update ships a file of this name; yours is {target.name}"
            )
        try:
            entry.rename(target)
        except OSError:
            complete = False
    return notes, complete


def _taken(path: Path) -> bool:
    return path.exists() or path.is_symlink()
