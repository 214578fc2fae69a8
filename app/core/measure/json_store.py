"""A small JSON file in DraftDeck's data folder that several processes update.

Two windows and the command line may each add to the same file (acceptance tallies,
recorded phone results). Every change is a read-change-write under an OS lock beside
the file, written atomically, so each writer applies its change onto what the others
wrote, and a reader never sees half a file. A file that cannot be read is set aside
(renamed with `.broken`, nothing the user had is lost) and a fresh one started.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from app.core.infra.errors import FileError, MissingFileError, WriteFailedError
from app.core.infra.file_lock import exclusive_lock
from app.core.infra.jsonfile import atomic_write_json, read_json_object

log = logging.getLogger("draftdeck.measure")

T = TypeVar("T")


def read_store(path: Path) -> dict[str, Any]:
    """The file's content; {} when it is missing or cannot be read (not set aside here:
    only a writer, holding the lock, may rename it)."""
    try:
        return read_json_object(path)
    except MissingFileError:
        return {}
    except FileError as exc:
        log.warning("%s cannot be read (%s); it is not used", path, exc.problem)
        return {}


def _read_for_update(path: Path) -> dict[str, Any]:
    try:
        return read_json_object(path)
    except MissingFileError:
        return {}
    except FileError as exc:
        broken = path.with_name(path.name + ".broken")
        try:
            path.replace(broken)
            log.warning("%s could not be read (%s); kept as %s", path, exc.problem, broken)
        except OSError as err:
            log.warning("could not set aside %s: %s", path, err)
        return {}


def update_store(path: Path, change: Callable[[dict[str, Any]], T]) -> T:
    """Apply `change` (which edits the content in place and returns anything) to the
    file as it is now, under the lock, and write it back atomically. A folder that
    refuses the write is a WriteFailedError naming the file."""
    try:
        with exclusive_lock(path.with_name(path.name + ".lock")):
            data = _read_for_update(path)
            answer = change(data)
            atomic_write_json(path, data, indent=1)
    except OSError as exc:
        raise WriteFailedError(path, f"not saved: {exc.strerror or exc}") from None
    return answer
