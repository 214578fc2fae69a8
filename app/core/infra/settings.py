"""User settings as versioned JSON, written atomically and merged with other processes.

A settings file that cannot be read (bad JSON, not a regular file, no permission, too
large) is set aside (renamed with `.broken`) rather than overwritten, so nothing the user
wrote is lost; defaults are used and `Settings.load_problem` says why, for the window.

Several windows and commands may share the file. Each `Settings` remembers the values it
was loaded with (or last saved), and a save applies only what this process changed since
then onto what is on disk, under an OS lock: for a list, the items it added are added and
the items it removed are removed; any other field is taken from disk unless this process
changed it. Keys this version does not know are kept, and a file written by a newer
version keeps its version number: our fields keep their names across versions, so
refusing to save would only lose the user's changes.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError, MissingFileError, WriteFailedError
from app.core.infra.file_lock import exclusive_lock
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.infra.paths import app_dirs
from app.core.infra.writable import folder_write_problem

log = logging.getLogger("draftdeck.settings")

SETTINGS_VERSION = 1
VERSION_KEY = "version"

# A settings file's content as parsed: any JSON, for keys other versions wrote.
SettingsFile = dict[str, Any]
# The fields' values by name: every field is text or a list of text.
FieldValues = dict[str, str | list[str]]


@dataclass
class Settings:
    library_dir: str = ""
    # Pack folders added by reference: they stay where the user keeps them.
    references: list[str] = field(default_factory=list)
    window_geometry: str = ""
    window_state: str = ""
    last_page: str = "library"
    # The pair Chat, Tune and Recipes work on (pack folder paths).
    pair_target: str = ""
    pair_draft: str = ""
    # Hub: a token for private or gated repos (HF_TOKEN is used when empty), and repos
    # the user added to the catalog.
    hub_token: str = ""
    extra_repos: list[str] = field(default_factory=list)
    # Phone: folders the user added as push destinations, and the one last used.
    phone_destinations: list[str] = field(default_factory=list)
    phone_root: str = ""
    # Chat: the folder the last export or chart image went to (the dialogs start there).
    export_folder: str = ""
    # The phone the forecast is made for (phone_profiles.py): a recorded phone's adb
    # model name or a published profile's name; empty: none chosen.
    phone_profile: str = ""

    def __post_init__(self) -> None:
        # What this process's changes are measured against; None: the defaults (not
        # loaded from a file).
        self._base: FieldValues | None = None
        # Keys of the file as read that are not fields (the version, a newer one's keys).
        self._file_extras: SettingsFile = {}
        # Why the file could not be used, for the window to show; None when it could.
        self.load_problem: str | None = None

    def library_path(self) -> Path:
        return Path(self.library_dir) if self.library_dir else app_dirs().default_library

    @classmethod
    def from_json(cls, data: SettingsFile) -> Settings:
        """Settings from a file's content. Other keys are kept for the next save, and the
        values read become the base this process's changes are measured against."""
        settings = cls()
        for name, value in _known_values(data).items():
            setattr(settings, name, value)
        settings._base = _field_values(settings)
        settings._file_extras = {k: v for k, v in data.items() if k not in _FIELD_NAMES}
        return settings

    def changes_onto(self, disk: SettingsFile) -> SettingsFile:
        """`disk` (a file's content) with this process's changes since loading applied."""
        merged = {**self._file_extras, **disk}
        on_disk = _known_values(disk)
        bases = self._base if self._base is not None else _field_values(Settings())
        for name, mine in _field_values(self).items():
            base, theirs = bases[name], on_disk[name]
            if isinstance(mine, list):
                removed = [v for v in base if v not in mine]
                added = [v for v in mine if v not in base and v not in theirs]
                merged[name] = [v for v in theirs if v not in removed] + added
            else:
                merged[name] = mine if mine != base else theirs
        version = merged.get(VERSION_KEY)
        # Never written lower than the file's: a newer version keeps its number.
        if not isinstance(version, int) or version < SETTINGS_VERSION:
            merged[VERSION_KEY] = SETTINGS_VERSION
        return merged

    def mark_saved(self, written: SettingsFile) -> None:
        """`written` is on disk: later saves send only changes made after this one."""
        self._base = _field_values(self)
        self._file_extras = {k: v for k, v in written.items() if k not in _FIELD_NAMES}


_FIELD_NAMES = frozenset(f.name for f in fields(Settings))


def _field_values(settings: Settings) -> FieldValues:
    # Copies, so that editing a list in place shows up as a change.
    return {name: copy.copy(getattr(settings, name)) for name in _FIELD_NAMES}


def _known_values(data: SettingsFile) -> FieldValues:
    """The fields `data` holds; a missing value or one of the wrong type is the default."""
    values = _field_values(Settings())
    for name, default in values.items():
        value = data.get(name, default)
        if isinstance(default, list):
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:
            ok = isinstance(value, type(default))
        if ok:
            values[name] = value
    return values


def settings_path() -> Path:
    return app_dirs().settings_file


def _lock_file(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _set_aside(path: Path, problem: FileError) -> str:
    """Rename an unusable settings file so it is neither lost nor overwritten."""
    broken = path.with_name(path.name + ".broken")
    try:
        path.replace(broken)
    except OSError as exc:
        log.warning("could not set aside %s: %s", path, exc)
        return f"Settings could not be read ({problem}); defaults are used."
    log.warning("settings unreadable (%s); kept as %s, using defaults", problem, broken)
    return f"Settings could not be read ({problem}); kept as {broken}, defaults are used."


def _read_file(path: Path) -> tuple[SettingsFile, str | None]:
    """The file's content ({} when missing or set aside), and why it was set aside."""
    try:
        return read_json_object(path), None
    except MissingFileError:
        return {}, None
    except FileError as exc:
        return {}, _set_aside(path, exc)


def load_settings(path: Path | None = None) -> Settings:
    path = path or settings_path()
    data, problem = _read_file(path)
    version = data.get(VERSION_KEY, SETTINGS_VERSION)
    if not isinstance(version, int) or version > SETTINGS_VERSION:
        log.warning("settings version %r is not understood; using what can be read", version)
    settings = Settings.from_json(data)
    settings.load_problem = problem
    return settings


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write this process's changes over what is on disk now (see the module's notes).

    A folder that cannot be written is a WriteFailedError naming the settings file; the
    settings in memory stay as they are, so the session goes on with them."""
    path = path or settings_path()
    try:
        with exclusive_lock(_lock_file(path)):
            disk, _ = _read_file(path)
            merged = settings.changes_onto(disk)
            atomic_write_json(path, merged, indent=2)
    except OSError as exc:
        raise WriteFailedError(path, f"settings not saved: {exc.strerror or exc}") from None
    settings.mark_saved(merged)


def unwritable_folders(settings: Settings) -> list[str]:
    """What the user cannot save because its folder refuses writes (read-only, not a
    folder, no permission); one line each, empty when all is well."""
    problems = []
    for folder, what in (
        (settings_path().parent, "settings"),
        (settings.library_path(), "downloads and imported packs"),
    ):
        reason = folder_write_problem(folder)
        if reason:
            problems.append(f"{what} cannot be saved: {folder}: {reason}")
    return problems
