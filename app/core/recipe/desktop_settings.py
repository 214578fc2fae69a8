"""This computer's settings for a pack: what DraftDeck runs it with here, kept apart from
the pack's recipes, which are the phone's.

A pack's `config.json` and `config_cpu.json` are what the phone app reads (the target on
the phone's GPU, `backend_type: opencl` with `thread_num` a GPU mode such as 68; the
draft on two CPU threads). What this computer needs instead (the CPU backend, its own
thread counts, `memory: normal` for exact comparisons, the draft length best here) lives
beside them in `<pack>/.draftdeck-this-computer.json`: a DraftDeck file, hidden, so
never pushed to a phone (phone/local_files.py, pack/sendable.py) nor published
(hub/publish.py); a Hub update moves it into the new copy with the user's other own
files (hub/carry_over.py).

The file is a versioned JSON object keyed by the recipe file each part overlays:

    {"version": 1,
     "config.json": {"thread_num": 1, "memory": "normal"},
     "config_cpu.json": {"thread_num": 1}}

recipe/files.py layers it whenever DraftDeck runs the pack here: the pack's recipe, then
this computer's settings for that file, then the caller's explicit keys. A phone recipe
nobody adapted still runs here: a backend this computer's MNN lacks runs on the CPU, and
the GPU mode that recipe gives as `thread_num` becomes a thread count (`host_fixes`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from app.core.infra.errors import BadValueError, FileError, MissingFileError
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.pack.files import CONFIG, DRAFT_RECIPE, DRAFT_RECIPE_ALT
from app.core.recipe.save_lock import saving

log = logging.getLogger("draftdeck.recipe")

THIS_COMPUTER_FILE = ".draftdeck-this-computer.json"
VERSION = 1
# The keys that may differ between this computer and a phone (the brief's list; what the
# sampler draws and which draft a target names are the pack's, wherever it runs).
DESKTOP_KEYS = ("backend_type", "thread_num", "precision", "memory", "draft_predict_length")
# The keys a phone recipe may carry that only ever mean this computer: none of its values
# is right on a phone ("Move to this computer" takes them out of a recipe).
DESKTOP_ONLY_VALUES: dict[str, tuple[Any, ...]] = {"memory": ("normal",)}
OVERLAID_FILES = (CONFIG, DRAFT_RECIPE, DRAFT_RECIPE_ALT)
# The pip build of MNN for desktops runs on the CPU only (schema.DESKTOP_BACKENDS).
HOST_BACKEND = "cpu"
DEFAULT_THREADS = 4  # MNN's own default thread count


@dataclass(frozen=True)
class DesktopSettings:
    """This computer's keys per recipe file they overlay (only files with keys)."""

    files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def of(self, name: str) -> dict[str, Any]:
        """The keys for the recipe file `name` (a copy; {} when none)."""
        return dict(self.files.get(name, {}))

    @property
    def empty(self) -> bool:
        return not any(self.files.values())

    def changed(self, name: str, updates: Mapping[str, Any]) -> DesktopSettings:
        """These settings with `updates` for the file `name`; a None value removes a key."""
        keys = self.of(name)
        for key, value in updates.items():
            if value is None:
                keys.pop(key, None)
            else:
                keys[key] = value
        files = {n: dict(v) for n, v in self.files.items() if n != name}
        if keys:
            files[name] = keys
        return DesktopSettings({n: files[n] for n in OVERLAID_FILES if n in files})

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, **{n: dict(v) for n, v in self.files.items() if v}}


def settings_path(pack: Path) -> Path:
    return pack / THIS_COMPUTER_FILE


def read_desktop(pack: Path) -> DesktopSettings:
    """The pack's settings for this computer; none without a file. A file that cannot be
    used raises a FileError naming it and the problem."""
    path = settings_path(pack)
    if not path.exists() and not path.is_symlink():
        return DesktopSettings()
    return from_object(read_json_object(path), path)


def from_object(data: Mapping[str, Any], path: Path) -> DesktopSettings:
    version = data.get("version")
    if version != VERSION:
        if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
            problem = f"version {version} was written by a newer DraftDeck (this one reads 1)"
        else:
            problem = f"version must be {VERSION}, not {version!r}"
        raise BadValueError(path, problem)
    files: dict[str, dict[str, Any]] = {}
    for name, keys in data.items():
        if name == "version":
            continue
        if name not in OVERLAID_FILES:
            known = ", ".join(OVERLAID_FILES)
            raise BadValueError(path, f"{name!r} is not a recipe file ({known})")
        if not isinstance(keys, dict):
            raise BadValueError(path, f"{name} must hold an object of settings")
        problems = settings_problems(keys, name)
        if problems:
            raise BadValueError(path, f"{name}: {'; '.join(problems)}")
        if keys:
            files[name] = dict(keys)
    return DesktopSettings({n: files[n] for n in OVERLAID_FILES if n in files})


def settings_problems(keys: Mapping[str, Any], name: str) -> list[str]:
    """What is wrong with `keys` as this computer's settings for the file `name`."""
    # Imported here: schema reads run recipes through files.py, which layers this module.
    from app.core.recipe import schema

    wrong = [key for key in keys if key not in DESKTOP_KEYS]
    if wrong:
        allowed = ", ".join(DESKTOP_KEYS)
        return [f"{', '.join(map(repr, wrong))}: not a setting of this computer ({allowed})"]
    scope = schema.TARGET if name == CONFIG else schema.DRAFT
    return [
        str(problem) for problem in schema.validate(keys, scope) if problem.severity == schema.ERROR
    ]


def write_desktop(pack: Path, settings: DesktopSettings) -> None:
    """Write the settings atomically (the caller holds the file's save lock); no keys
    left removes the file, as a pack never adapted has none."""
    path = settings_path(pack)
    if settings.empty:
        path.unlink(missing_ok=True)
    else:
        atomic_write_json(path, settings.to_json())


def update_desktop(pack: Path, name: str, updates: Mapping[str, Any]) -> DesktopSettings:
    """Change the keys of the file `name` (None removes one) as one step under the file's
    save lock; returns the settings before, for undo. Raises FileError when the file
    cannot be used (nothing is written then) or written."""
    problems = settings_problems({k: v for k, v in updates.items() if v is not None}, name)
    if problems:
        raise BadValueError(settings_path(pack), f"{name}: {'; '.join(problems)}")
    if not pack.is_dir():  # the write would make the folder: a pack is never conjured up
        raise MissingFileError(pack, "folder not found; nothing was saved")
    with saving(settings_path(pack)):
        before = read_desktop(pack)
        write_desktop(pack, before.changed(name, updates))
    return before


def restore_desktop(pack: Path, settings: DesktopSettings) -> None:
    """Put the settings back as they were (undo), under the file's save lock."""
    with saving(settings_path(pack)):
        write_desktop(pack, settings)


def desktop_overlay(pack: Path, name: str) -> dict[str, Any]:
    """This computer's keys over the recipe file `name`, for running the pack: a file
    that cannot be used counts as none (the pack then runs as its recipes say, with
    `host_fixes`); the Recipes page and `draftdeck recipe show` say what is wrong."""
    try:
        return read_desktop(pack).of(name)
    except FileError as exc:
        log.warning("ignoring this computer's settings: %s", exc)
        return {}


def host_threads() -> int:
    """The thread count a recipe that gives none for this computer runs with here."""
    return min(DEFAULT_THREADS, psutil.cpu_count(logical=False) or 1)


def host_fixes(run: Mapping[str, Any], chosen: Mapping[str, Any]) -> dict[str, Any]:
    """What a phone recipe must become to run here at all, for keys this computer's
    settings (`chosen`) leave open: `run` is the recipe as layered so far. A backend
    this computer's MNN lacks runs on the CPU (MNN would fall back by itself, with a
    warning), and its `thread_num`, a GPU mode such as 68 there, is no thread count."""
    backend = run.get("backend_type")
    if not isinstance(backend, str) or backend == HOST_BACKEND:
        return {}
    fixes: dict[str, Any] = {"backend_type": HOST_BACKEND}
    if "thread_num" in run and "thread_num" not in chosen:
        fixes["thread_num"] = host_threads()
    return fixes


def desktop_value(key: str, value: Any) -> bool:
    """A value that only ever means this computer, wherever it is written."""
    return value in DESKTOP_ONLY_VALUES.get(key, ())
