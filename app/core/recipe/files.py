"""A recipe file as the user wrote it: order, indentation and unknown keys survive edits.

Saving writes atomically (temp file, fsync, replace) and keeps the previous file as
`<name>.bak`. A file changed by someone else since it was opened is detected before
anything is overwritten; two saves of one file take turns (save_lock.py). The first time
a pack's recipe is saved, what the pack shipped is kept so "reset to pack default" can
bring it back: in `<pack>/.draftdeck-original/`, or, for a pack added by reference, in
DraftDeck's data folder (copies.py says where). Both copies keep the recipe's mode.

What a model runs with layers these files the way the engine hands them to MNN: MNN reads
the pack's config.json itself and `set_config()` merges the engine's dict over it. That
dict is, for the target, this computer's settings for its config.json
(desktop_settings.py) under the caller's keys; for the draft, this computer's settings
for its config.json, its recipe (`draft_recipe_path`: config_cpu.json, or
draft_config_cpu.json when that is the only one), this computer's settings for that
recipe, then the caller's keys (`run_recipes`). Each file's own layer comes right above
it: the pack's recipes are the phone's, and what runs here is adapted over them without
changing them. A pack with both draft recipes is handled in draft_recipes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.infra.errors import (
    EmptyFileError,
    FileError,
    InvalidJsonError,
    MissingFileError,
    UnreadableFileError,
    WriteFailedError,
)
from app.core.infra.jsonfile import (
    JSON_SIZE_LIMIT,
    atomic_write_bytes,
    decode_text,
    open_regular,
    parse_json,
    read_json_object,
    read_regular_bytes,
    read_text,
    remove_stale_temps,
)
from app.core.pack.files import CONFIG, DRAFT_RECIPE, DRAFT_RECIPE_ALT

# Where the .bak and the shipped original go (beside the recipe, or in DraftDeck's data
# folder for a pack added by reference); callers take them from here.
from app.core.recipe.copies import backup_path as backup_path
from app.core.recipe.copies import original_path as original_path
from app.core.recipe.desktop_settings import desktop_overlay, host_fixes
from app.core.recipe.sampler_settings import SamplerSettings, sampler_settings
from app.core.recipe.save_lock import saving

TARGET_CONFIG = CONFIG  # the target's run settings live in its config.json


class ChangedOnDiskError(FileError):
    code = "changed_on_disk"


class InvalidRecipeError(FileError):
    code = "invalid_recipe"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def detect_indent(text: str) -> int | str:
    """The indentation of the first indented line: a tab, or a number of spaces."""
    match = re.search(r"\n([ \t]+)\S", text)
    if match is None:
        return 4
    unit = match.group(1)
    return "\t" if unit.startswith("\t") else len(unit)


@dataclass
class RecipeDocument:
    path: Path
    text: str  # as last read from or written to disk
    data: dict[str, Any]
    indent: int | str
    trailing_newline: bool
    _disk_digest: str

    @classmethod
    def load(cls, path: Path) -> RecipeDocument:
        raw = read_regular_bytes(path, "recipe", JSON_SIZE_LIMIT)
        text = decode_text(raw, path)
        data = cls.parse(path, text)
        return cls(
            path=path,
            text=text,
            data=data,
            indent=detect_indent(text),
            trailing_newline=text.endswith("\n"),
            _disk_digest=_digest(raw),
        )

    @classmethod
    def open_or_new(cls, path: Path) -> RecipeDocument:
        """Open the recipe, or start an empty one (4-space indent) if the pack has none."""
        if path.exists():
            return cls.load(path)
        return cls(path, "", {}, 4, True, "")

    @classmethod
    def replacing(cls, path: Path) -> RecipeDocument:
        """Open a recipe to replace it: as `open_or_new`, but a file that is not a JSON
        object opens empty (its change detection still holds), so that the user can
        choose to overwrite a broken copy with a good one."""
        try:
            return cls.open_or_new(path)
        except (InvalidJsonError, UnreadableFileError, EmptyFileError):
            raw = read_regular_bytes(path, "recipe", JSON_SIZE_LIMIT)
            return cls(path, "", {}, 4, True, _digest(raw))

    @classmethod
    def parse(cls, path: Path, text: str) -> dict[str, Any]:
        """Parse edited text the way `load` would, with line and column on errors."""
        data = parse_json(text, path)
        if not isinstance(data, dict):
            raise InvalidJsonError(
                path, f"expected an object at the top, found {type(data).__name__}"
            )
        return data

    def render(self, data: dict[str, Any]) -> str:
        """Text for `data` in this file's style; the file's own text when nothing changed
        (a file not written yet has no text of its own: `{}` then)."""
        if self.on_disk and data == self.data and list(data) == list(self.data):
            return self.text
        try:
            # NaN and Infinity would make a file no JSON reader (MNN's included) accepts.
            text = json.dumps(data, indent=self.indent, ensure_ascii=False, allow_nan=False)
        except ValueError:
            raise InvalidRecipeError(
                self.path, "cannot be saved: NaN and Infinity are not valid JSON"
            ) from None
        return text + "\n" if self.trailing_newline else text

    @property
    def on_disk(self) -> bool:
        """The file existed when opened, or has been saved since (not a new one)."""
        return self._disk_digest != ""

    def changed_on_disk(self) -> bool:
        try:
            return _digest(read_regular_bytes(self.path, "recipe")) != self._disk_digest
        except MissingFileError:
            return self._disk_digest != ""  # deleted since opened, unless it never existed
        except FileError:
            return True

    def save(self, data: dict[str, Any], overwrite_changes: bool = False) -> None:
        """Write `data` (keeping the .bak and the shipped original); another save of the
        file, in this process or another, waits for this one (save_lock.py), so the
        check for changes by others and the write are one step."""
        with saving(self.path) as locked:
            if not overwrite_changes and self.changed_on_disk():
                raise ChangedOnDiskError(
                    self.path, "was changed by another program since it was opened"
                )
            text = self.render(data)
            if not self.path.parent.is_dir():
                # Saving must not conjure up a pack: a mistyped folder is reported instead.
                raise MissingFileError(self.path.parent, "folder not found; nothing was saved")
            try:
                if locked:  # a save killed half-way left these; no live save's are here
                    for written in (self.path, backup_path(self.path), original_path(self.path)):
                        remove_stale_temps(written)
                keep_original(self.path)
                write_backup(self.path)
                atomic_write_bytes(self.path, text.encode("utf-8"))
            except OSError as exc:
                raise WriteFailedError(
                    self.path, f"could not save: {exc.strerror or exc}"
                ) from None
        self.text, self.data = text, json.loads(text)
        self._disk_digest = _digest(text.encode("utf-8"))


def _keep_copy(recipe: Path, copy: Path) -> None:
    """Write `copy` as `recipe` is now, with the recipe's permissions (a private copy
    of a file others may read would be a surprise, and a wider one a leak)."""
    with open_regular(recipe, "recipe") as handle:
        mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
        data = handle.read()
    atomic_write_bytes(copy, data, mode=mode)


def write_backup(recipe: Path) -> None:
    """Keep the file as it is now as `<name>.bak`, atomically like the recipe itself: a
    save killed half-way leaves the old backup or the new one, never a torn one."""
    if recipe.exists():
        _keep_copy(recipe, backup_path(recipe))


def keep_original(recipe: Path) -> None:
    """Copy the file as the pack shipped it, once, before the first edit."""
    original = original_path(recipe)
    if recipe.is_file() and not original.exists():
        _keep_copy(recipe, original)


def reset_to_original(recipe: Path) -> bool:
    """Put back what the pack shipped; False when no original was kept."""
    original = original_path(recipe)
    if not original.is_file():
        return False
    with saving(recipe):
        write_backup(recipe)
        atomic_write_bytes(recipe, read_regular_bytes(original, "recipe"))
    return True


def original_text(recipe: Path) -> str | None:
    """The pack's shipped text (kept copy, or the file itself if never edited)."""
    original = original_path(recipe)
    source = original if original.is_file() else recipe
    return read_text(source) if source.is_file() else None


def parse_value(text: str) -> Any:
    """`KEY=VALUE` on the command line: JSON where it parses, otherwise a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


# -- what a model runs with -----------------------------------------------------------------


def read_recipe(path: Path) -> dict[str, Any]:
    """A recipe file's keys: {} when the file is missing or not a JSON object."""
    try:
        return read_json_object(path) if path.is_file() else {}
    except FileError:
        return {}


def draft_recipe_path(draft: Path) -> Path:
    """The one draft recipe the engine runs with (Recipes page and CLI say the same):
    config_cpu.json; draft_config_cpu.json only when the pack has no config_cpu.json;
    config_cpu.json again when it has neither (a save creates it). config_cpu.json wins
    because it is the name the packs' cards and MNN's `draft_config_path` examples give
    the draft recipe, and the file DraftDeck has always run and tuned."""
    if not (draft / DRAFT_RECIPE).is_file() and (draft / DRAFT_RECIPE_ALT).is_file():
        return draft / DRAFT_RECIPE_ALT
    return draft / DRAFT_RECIPE


def _here(pack: Path, layers: list[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """`layers` (recipe file name, its keys; lowest first), each under this computer's
    settings for it, with what a phone recipe needs to run here (host_fixes)."""
    merged: dict[str, Any] = {}
    chosen: dict[str, Any] = {}
    for name, keys in layers:
        overlay = desktop_overlay(pack, name)
        merged.update(keys)
        merged.update(overlay)
        chosen.update(overlay)
    return host_fixes(merged, chosen)


def draft_settings(
    draft: Path,
    overrides: Mapping[str, Any] | None = None,
    recipe: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the engine hands MNN's `set_config()` for a draft: this computer's settings
    for its config.json, its recipe (the pack's `draft_recipe_path`, or `recipe` as being
    edited), this computer's settings for that recipe, then the caller's keys."""
    path = draft_recipe_path(draft)
    saved = read_recipe(path) if recipe is None else recipe
    config = read_recipe(draft / TARGET_CONFIG)
    below = desktop_overlay(draft, TARGET_CONFIG)
    fixes = _here(draft, [(TARGET_CONFIG, config), (path.name, saved)])
    return {**below, **saved, **desktop_overlay(draft, path.name), **fixes, **(overrides or {})}


def target_settings(target: Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the engine hands MNN's `set_config()` for a target: this computer's settings
    for its config.json (which MNN reads itself) under the caller's keys."""
    saved = read_recipe(target / TARGET_CONFIG)
    overlay = desktop_overlay(target, TARGET_CONFIG)
    fixes = _here(target, [(TARGET_CONFIG, saved)])
    return {**overlay, **fixes, **(overrides or {})}


def target_run_recipe(target: Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The settings the target runs with: its config.json under `target_settings`."""
    return {**read_recipe(target / TARGET_CONFIG), **target_settings(target, overrides)}


def target_sampler(target: Path | None) -> tuple[SamplerSettings | None, str]:
    """The sampler the target's run recipe asks for, or None and why it cannot be read
    (the chat and a sampled sweep both decode with it)."""
    if target is None:
        return None, ""
    try:
        return sampler_settings(target_run_recipe(target, {})), ""
    except ValueError as exc:
        return None, f"Cannot read the sampler of {target / TARGET_CONFIG}: {exc}"


def draft_run_recipe(
    draft: Path,
    overrides: Mapping[str, Any] | None = None,
    recipe: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The settings the draft runs with: its config.json, under its recipe
    (`draft_settings`), under the caller's keys."""
    return {**read_recipe(draft / TARGET_CONFIG), **draft_settings(draft, overrides, recipe)}


def run_recipes(
    target: Path,
    draft: Path | None,
    target_overrides: Mapping[str, Any] | None = None,
    draft_overrides: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings each model of a pair runs with ({} for no draft), as the engine
    applies them (see the module's notes)."""
    target_run = target_run_recipe(target, target_overrides)
    draft_run = draft_run_recipe(draft, draft_overrides) if draft is not None else {}
    return target_run, draft_run
