"""Partial export folders a killed export left behind, found and removed at the next
start (of `draftdeck export` or the window).

An export builds its pack in a hidden `.NAME.draftdeck-partial` folder beside the output
(export_run.py), anywhere on disk: a kill leaves one there, as large as the model. So
each export records its partial folder in the data folder (`exports/<id>.json`) and holds
an OS lock (`<id>.lock`) for as long as it may write there; the OS drops the lock with
the process. A record whose lock can be taken belongs to an export that is gone: its
folder is removed if it still carries DraftDeck's partial mark, and only then.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path

from app.core.infra.deletion import remove_tree
from app.core.infra.file_lock import try_lock, unlock
from app.core.infra.jsonfile import atomic_write_bytes

log = logging.getLogger("draftdeck.export")

PARTIAL_MARK = ".draftdeck-partial"  # in a partial folder from its first moment


def records_folder() -> Path:
    # Imported here: export_run is imported by tools run where platformdirs is not.
    from app.core.infra.paths import app_dirs

    return app_dirs().data / "exports"


class ExportBusy(OSError):
    """Another export (live) writes the same partial folder."""


class PartialRecord:
    """The record of one partial folder, held from `hold()` until `release()`."""

    def __init__(self, partial: Path, folder: Path | None = None) -> None:
        self.partial = partial.absolute()
        name = hashlib.sha256(str(self.partial).encode()).hexdigest()[:20]
        folder = folder or records_folder()
        self._record = folder / f"{name}.json"
        self._lock = folder / f"{name}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def hold(self) -> None:
        """Take the lock and write the record; ExportBusy when a live export holds it."""
        if self._fd is not None:
            return
        self._lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        if not try_lock(fd):
            os.close(fd)
            raise ExportBusy(f"{self.partial.parent}: another export is writing there now")
        self._fd = fd
        record = json.dumps({"partial": str(self.partial)}).encode()
        atomic_write_bytes(self._record, record)

    def release(self) -> None:
        """Forget the record (the partial folder is gone or has become the pack)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            self._record.unlink(missing_ok=True)
        unlock(fd)
        os.close(fd)
        with contextlib.suppress(OSError):  # Windows: another start may have it open now
            self._lock.unlink(missing_ok=True)


def remove_partial(partial: Path) -> None:
    """Remove `partial` if it is DraftDeck's partial folder (or empty); else leave it."""
    if (partial / PARTIAL_MARK).is_file() or (partial.is_dir() and not any(partial.iterdir())):
        remove_tree(partial)


def remove_abandoned(folder: Path | None = None) -> list[Path]:
    """Remove the partial folders of exports that are gone; the folders removed. A folder
    that cannot be removed now is tried again at the next start."""
    folder = folder or records_folder()
    removed: list[Path] = []
    for record in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        lock = record.with_suffix(".lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        except OSError:
            continue
        try:
            if not try_lock(fd):
                continue  # its export is running
            try:
                _remove_recorded(record, removed)
            finally:
                unlock(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            lock.unlink(missing_ok=True)
    return removed


def _remove_recorded(record: Path, removed: list[Path]) -> None:
    try:
        partial = Path(str(json.loads(record.read_text(encoding="utf-8"))["partial"]))
        if partial.is_dir():
            remove_partial(partial)
            if not partial.exists():
                removed.append(partial)
                log.info("removed %s, left by an export that did not finish", partial)
        record.unlink()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("could not remove what %s records: %s", record, exc)
