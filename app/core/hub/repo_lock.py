"""One download per repo across processes: an OS lock on a file in the library.

The window and any number of `draftdeck download` commands share a library; two of them
writing the same `.part` file made a pack of twice the size. Each download holds
`<library>/.download-<owner>__<name>.lock` (beside its staging folder) while it fetches
and installs. The OS lock (flock on POSIX, msvcrt.locking on Windows) goes with the
process, so a crash or a kill never leaves a stale lock.

The file is removed on release so the library stays clean. On POSIX it is unlinked
while still locked, and a process that locked a file since unlinked sees the path no
longer names it and tries again; Windows refuses to delete a file anyone has open, so
there it goes only once no one has it open.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from app.core.hub.install import staging_dir
from app.core.infra.file_lock import try_lock, unlock


def lock_path(library: Path, repo_id: str) -> Path:
    staging = staging_dir(library, repo_id)
    return staging.with_name(staging.name + ".lock")


def _names_this_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


class RepoLock:
    """The download lock of one repo; also excludes a second holder in the same process."""

    def __init__(self, library: Path, repo_id: str) -> None:
        self.path = lock_path(library, repo_id)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if no one holds it; OSError if the library is missing or read-only."""
        while self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not try_lock(fd):
                os.close(fd)
                return False
            if _names_this_file(fd, self.path):
                self._fd = fd
            else:  # its holder removed it on release after we opened it: open anew
                unlock(fd)
                os.close(fd)
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if sys.platform != "win32":
            with contextlib.suppress(OSError):
                self.path.unlink()  # still locked: no one else can hold this file now
        try:
            unlock(fd)
        finally:
            os.close(fd)
        if sys.platform == "win32":
            with contextlib.suppress(OSError):  # someone has it open: theirs now
                self.path.unlink()
