"""One download per repo across processes: an OS lock on a small file.

The window and any number of `draftdeck download` commands share a library; two of them
writing the same `.part` file made a pack of twice the size. Each download holds the
lock of its (library, repo) while it fetches and installs. The OS lock (flock on POSIX,
msvcrt.locking on Windows: core/infra/file_lock.py) goes with the process, so a crash or
a kill never leaves a stale lock.

The lock files live in DraftDeck's cache folder, keyed by the library's path, and are
never removed: removing a lock file that another process has open and waits on would
let two holders in at once, and Windows refuses to delete an open file anyway. So the
library's listing stays the user's packs. (Processes with different DRAFTDECK_HOME
folders sharing one library do not see each other's locks.)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from app.core.hub.install import staging_dir
from app.core.infra.file_lock import try_lock, unlock
from app.core.infra.paths import app_dirs


def lock_path(library: Path, repo_id: str) -> Path:
    where = str(library.resolve()).encode("utf-8", "surrogateescape")
    key = hashlib.sha256(where).hexdigest()[:16]
    return app_dirs().cache / "locks" / f"{key}{staging_dir(library, repo_id).name}.lock"


class RepoLock:
    """The download lock of one repo; also excludes a second holder in the same process."""

    def __init__(self, library: Path, repo_id: str) -> None:
        self.path = lock_path(library, repo_id)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if no one holds it; OSError if the cache folder is unwritable."""
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
            if not try_lock(fd):
                os.close(fd)
                return False
            self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            unlock(fd)
        finally:
            os.close(fd)
