"""An exclusive OS lock on a file, held for a `with` block, across processes.

flock on POSIX, msvcrt.locking on Windows: the OS drops the lock with the process, so a
crash or a kill never leaves a stale lock behind. The lock file itself is left in place
(deleting it while others wait on it would let two holders in at once).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

if sys.platform == "win32":
    import msvcrt

    def try_lock(fd: int) -> bool:
        """Take the lock on the open file `fd` unless another holder has it."""
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks bytes from the current position
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _lock(fd: int) -> None:
        # LK_LOCK itself gives up after about 10 s; waiting longer is right here.
        while not try_lock(fd):
            time.sleep(0.05)

    def unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:

    def _fcntl() -> ModuleType:
        try:
            import fcntl
        except ImportError as exc:  # a POSIX Python without it (a Windows-like test one)
            raise OSError(f"file locking is not available here: {exc}") from None
        return fcntl

    def try_lock(fd: int) -> bool:
        """Take the lock on the open file `fd` unless another holder has it."""
        fcntl = _fcntl()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _lock(fd: int) -> None:
        fcntl = _fcntl()
        fcntl.flock(fd, fcntl.LOCK_EX)

    def unlock(fd: int) -> None:
        fcntl = _fcntl()
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def exclusive_lock(lock_file: Path) -> Iterator[None]:
    """Hold the lock on `lock_file` (created if needed), waiting for other holders."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    try:
        _lock(fd)
        try:
            yield
        finally:
            unlock(fd)
    finally:
        os.close(fd)


@contextmanager
def lock_if_free(lock_file: Path) -> Iterator[bool]:
    """Hold the lock on `lock_file` (created if needed) unless another holder has it:
    yields whether it is held, without waiting."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    try:
        taken = try_lock(fd)
        try:
            yield taken
        finally:
            if taken:
                unlock(fd)
    finally:
        os.close(fd)
