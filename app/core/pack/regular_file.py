"""Opening pack files that must be ordinary files.

A pack is user-supplied: its tokenizer or graph could be a FIFO (opening or reading it
waits forever for a writer) or a symlink to a device such as /dev/zero (reading never
ends). Such files are refused by their type before any byte is read.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from app.core.infra.errors import UnreadableFileError
from app.core.infra.jsonfile import reading

# Never wait on open (a FIFO without a writer) nor take a terminal as controlling one.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_unless_regular(path: Path, mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        raise UnreadableFileError(path, f"{what} is {_kind(mode)}, not a regular file")


@contextmanager
def open_regular(path: Path, what: str) -> Iterator[BinaryIO]:
    """Open `path` for reading only if it is (or links to) a regular file."""
    with reading(path, what):
        _refuse_unless_regular(path, os.stat(path).st_mode, what)
        fd = os.open(path, _OPEN_FLAGS)
    try:
        # Checked again on the open file: it could have been swapped since the stat.
        _refuse_unless_regular(path, os.fstat(fd).st_mode, what)
        if sys.platform != "win32":  # opened non-blocking (a FIFO would wait for a writer)
            os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_regular_bytes(path: Path, what: str) -> bytes:
    """The whole content of a regular file; other kinds are refused, naming the file."""
    with open_regular(path, what) as handle, reading(path, what):
        return handle.read()
