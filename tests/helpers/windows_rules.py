"""Windows' file rules, enforced on Linux so that tests here catch code that breaks them.

Linux lets a program delete or rename a file it still has open, rename onto an existing
file, delete a read-only file and fsync a read-only descriptor; Windows refuses all of
them (the last one silently, where the error is swallowed). `WindowsRules` wraps the
real os functions with checks against this process's real state (its open descriptors
in /proc/self/fd, its mappings in /proc/self/maps, the files' modes) and raises the
error Windows would, after recording what was broken. The real call runs otherwise.
Linux only: on Windows the OS enforces the rules itself.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

PathArg = str | bytes | os.PathLike[str]


def open_paths() -> set[str]:
    """Every file this process has open or mapped, by real path."""
    found: set[str] = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # closed while listing (the listing's own descriptor)
            continue
        if target.startswith("/"):
            found.add(target)
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.rstrip("\n").split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/"):
                found.add(fields[5])
    return found


def held_under(path: str) -> list[str]:
    """Open or mapped files that are `path` or lie inside it."""
    return sorted(p for p in open_paths() if p == path or p.startswith(path + os.sep))


def _full(path: PathArg, dir_fd: int | None) -> str:
    text = os.fsdecode(os.fspath(path))
    if dir_fd is not None and not os.path.isabs(text):
        text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
    return os.path.realpath(text)


def _cwds() -> set[str]:
    me = psutil.Process()
    found = {os.path.realpath(os.getcwd())}
    for child in me.children(recursive=True):
        try:
            found.add(os.path.realpath(child.cwd()))
        except psutil.Error:  # gone, or not ours to look at
            continue
    return found


class WindowsRules:
    def __init__(self) -> None:
        self.violations: list[str] = []  # wrong order of operations: bugs
        self.read_only_refused: list[str] = []  # Windows' normal answer; code must cope
        self.syncs: list[tuple[str, str]] = []  # (thread name, file) per allowed sync
        self._lock = threading.Lock()

    def _refuse(self, error: OSError, what: str, bug: bool = True) -> None:
        with self._lock:
            (self.violations if bug else self.read_only_refused).append(what)
        raise error

    def _not_held(self, action: str, path: str) -> None:
        held = held_under(path)
        if held:
            self._refuse(
                PermissionError(errno.EACCES, "in use by this process (Windows refuses)", path),
                f"{action} {path} while open: {held}",
            )

    def _not_read_only(self, action: str, path: str) -> None:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return
        if stat.S_ISREG(mode) and not mode & stat.S_IWRITE:
            self._refuse(
                PermissionError(errno.EACCES, "read-only (Windows refuses)", path),
                f"{action} read-only {path}",
                bug=False,
            )

    def check_delete(self, path: str) -> None:
        self._not_held("delete", path)
        self._not_read_only("delete", path)

    def check_rmdir(self, path: str) -> None:
        self._not_held("remove folder", path)
        if path in _cwds():
            self._refuse(
                PermissionError(errno.EACCES, "a process's current folder", path),
                f"remove folder {path}, the current folder of a process",
            )

    def check_move(self, action: str, src: str, dst: str, onto_existing_ok: bool) -> None:
        self._not_held(action, src)
        if os.path.lexists(dst):
            if not onto_existing_ok:
                self._refuse(
                    FileExistsError(errno.EEXIST, "target exists (Windows rename refuses)", dst),
                    f"{action} {src} onto existing {dst}",
                )
            self._not_held(f"{action} onto", dst)
            self._not_read_only(f"{action} onto", dst)

    def check_sync(self, fd: Any) -> None:
        import fcntl  # here: this module is imported (and skipped) on Windows too

        number = fd if isinstance(fd, int) else fd.fileno()
        where = os.readlink(f"/proc/self/fd/{number}")
        if stat.S_ISDIR(os.fstat(number).st_mode):
            return  # a folder's sync is POSIX-only; code must skip it on Windows
        if fcntl.fcntl(number, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            self._refuse(
                OSError(errno.EBADF, "fsync of a read-only descriptor (Windows refuses)"),
                f"sync {where} through a read-only descriptor",
            )
        with self._lock:
            self.syncs.append((threading.current_thread().name, where))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def wrap(name: str, check: Callable[..., None]) -> None:
            real = getattr(os, name)

            @functools.wraps(real)
            def checked(*args: Any, **kwargs: Any) -> Any:
                check(*args, **kwargs)
                return real(*args, **kwargs)

            monkeypatch.setattr(os, name, checked)

        def delete(path: PathArg, *, dir_fd: int | None = None) -> None:
            self.check_delete(_full(path, dir_fd))

        def rmdir(path: PathArg, *, dir_fd: int | None = None) -> None:
            self.check_rmdir(_full(path, dir_fd))

        def mover(action: str, onto_existing_ok: bool) -> Callable[..., None]:
            def check(
                src: PathArg,
                dst: PathArg,
                *,
                src_dir_fd: int | None = None,
                dst_dir_fd: int | None = None,
            ) -> None:
                self.check_move(
                    action, _full(src, src_dir_fd), _full(dst, dst_dir_fd), onto_existing_ok
                )

            return check

        wrap("unlink", delete)
        wrap("remove", delete)
        wrap("rmdir", rmdir)
        wrap("rename", mover("rename", onto_existing_ok=False))
        wrap("replace", mover("replace", onto_existing_ok=True))
        wrap("fsync", self.check_sync)
        if hasattr(os, "fdatasync"):
            wrap("fdatasync", self.check_sync)


def handles_under(folder: Path) -> list[str]:
    """What this process still has open or mapped inside `folder` (should be nothing)."""
    return held_under(os.path.realpath(folder))
