"""Deleting folders under the rules of every OS.

Windows refuses to delete a read-only file (git's object files, files copied from
read-only media or unpacked with their attributes), which POSIX allows; POSIX refuses
to delete what is inside a read-only folder. `remove_tree` clears the read-only bit on
the entry and its folder and tries once more. Nothing helps with a file another program
holds open or a folder that is some process's current folder (Windows refuses both):
those are raised, or skipped with `ignore_errors`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_REMOVERS = {"unlink", "remove", "rmdir"}  # by name: a wrapped os.unlink is still one


def _make_writable(path: str) -> None:
    if os.path.islink(path):  # chmod would follow it out of the tree
        return
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | stat.S_IWRITE)


def _retry_writable(
    func: Callable[..., Any], path: str, exc: BaseException, top: str, ignore_errors: bool
) -> None:
    try:
        if getattr(func, "__name__", "") not in _REMOVERS:  # listing or opening failed
            raise exc
        _make_writable(path)
        folder = os.path.dirname(os.path.abspath(path))
        if folder == top or folder.startswith(top + os.sep):  # nothing outside the tree
            _make_writable(folder)
        func(path)
    except OSError:
        if not ignore_errors:
            raise


def remove_tree(path: Path, ignore_errors: bool = False) -> None:
    """shutil.rmtree that also removes read-only files and folders, on every OS."""
    top = os.path.abspath(path)
    if sys.version_info >= (3, 12):  # onerror is deprecated there
        shutil.rmtree(path, onexc=lambda f, p, e: _retry_writable(f, p, e, top, ignore_errors))
    else:
        shutil.rmtree(path, onerror=lambda f, p, i: _retry_writable(f, p, i[1], top, ignore_errors))
