"""Reading JSON with precise error positions, and atomic writes.

Only regular files are read: a FIFO would block the open or the read forever and a
device such as /dev/zero (even behind a symlink) never ends, so both are refused by
their type before any byte is read. JSON files are capped at `JSON_SIZE_LIMIT`. A file
that must not be a link at all (a pack's file about to be sent: pack/sendable.py) is
opened without following one.

Atomic writes follow qutebrowser's savefile idea: write a temporary file in the same
folder, fsync it, then replace the target, so a crash leaves the old or the new file,
never a torn one.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from app.core.infra.errors import (
    EmptyFileError,
    InvalidJsonError,
    MissingFileError,
    UnreadableFileError,
)

# Far above any settings, recipe or pack config.json; a bigger "JSON" file is a mistake.
JSON_SIZE_LIMIT = 16 << 20
# Integers as MNN's reader (rapidjson) holds them: int64 or uint64; a longer literal
# becomes an inexact double there.
WHOLE_NUMBER_DIGITS = 20
WHOLE_NUMBER_RANGE = (-(1 << 63), 1 << 64)

# Never wait on open (a FIFO without a writer) nor take a terminal as controlling one.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # none on Windows: the lstat before is the check


@contextmanager
def reading(path: Path, what: str = "file") -> Iterator[None]:
    """Turn OS errors while reading `path` into typed errors that name it."""
    try:
        yield
    except FileNotFoundError:
        raise MissingFileError(path, f"{what} not found") from None
    except IsADirectoryError:
        raise UnreadableFileError(path, f"is a folder, not a {what}") from None
    except OSError as exc:
        raise UnreadableFileError(path, exc.strerror or str(exc)) from None


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_irregular(path: Path, mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        raise UnreadableFileError(path, f"{what} is {file_kind(mode)}, not a regular file")


def _refuse_oversized(path: Path, size: int, limit: int | None, what: str) -> None:
    if limit is not None and size > limit:
        raise UnreadableFileError(
            path, f"{what} is too large ({size} bytes; at most {limit} are read)"
        )


def open_regular_file(
    path: Path, what: str = "file", limit: int | None = None, follow_links: bool = True
) -> BinaryIO:
    """`path` open for reading if it is (or, with `follow_links`, links to) a regular file
    of at most `limit` bytes; a FIFO, a device or a folder is refused, naming the file,
    before any read (a FIFO would wait for a writer, /dev/zero never ends). The caller
    closes it; OS errors while reading it are the caller's to word."""
    with reading(path, what):
        _refuse_irregular(path, (os.stat if follow_links else os.lstat)(path).st_mode, what)
        fd = os.open(path, _READ_FLAGS | (0 if follow_links else _NO_FOLLOW))
    try:
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    try:
        # Checked again on the open file: it could have been swapped since the stat.
        status = os.fstat(fd)
        _refuse_irregular(path, status.st_mode, what)
        _refuse_oversized(path, status.st_size, limit, what)
        # Opened non-blocking (where that exists) only so a FIFO cannot wait.
        if sys.platform != "win32" and hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
    except BaseException:
        handle.close()
        raise
    return handle


@contextmanager
def open_regular(path: Path, what: str = "file", limit: int | None = None) -> Iterator[BinaryIO]:
    """`open_regular_file` for a `with` block, whose OS errors name the file."""
    with open_regular_file(path, what, limit) as handle, reading(path, what):
        yield handle


def read_regular_bytes(path: Path, what: str = "file", limit: int | None = None) -> bytes:
    """The content of a regular file of at most `limit` bytes (see `open_regular`)."""
    with open_regular(path, what, limit) as handle:
        data = handle.read() if limit is None else handle.read(limit + 1)
    # The file may have grown after the fstat.
    _refuse_oversized(path, len(data), limit, what)
    return data


def read_text(path: Path, limit: int | None = None) -> str:
    """Read a UTF-8 text file, turning OS and decoding errors into typed ones."""
    return decode_text(read_regular_bytes(path, limit=limit), path)


def read_named_text(path: Path, limit: int = JSON_SIZE_LIMIT) -> str:
    """A text file the user named on the command line. A pipe is welcome here, as it was
    asked for (`--prompt-file <(cmd)`), so it is read as it comes; at most `limit` bytes
    are read, so a device such as /dev/zero is refused rather than read forever."""
    with reading(path, "file"), path.open("rb") as handle:
        data = handle.read(limit + 1)
    _refuse_oversized(path, len(data), limit, "file")
    return decode_text(data, path)


def decode_text(data: bytes, path: Path) -> str:
    """`data` read from `path` as UTF-8 text (a BOM is dropped), or an error naming it."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(path, f"not UTF-8 text (byte {exc.start})") from None


class _Refused(ValueError):
    """A value JSON allows but no reader agrees on (raised inside the parse)."""


class _Repeated(dict[str, Any]):
    """An object that gave `key` twice; kept to say where once the parse is done."""

    key = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            repeated = _Repeated(obj)
            repeated.key = key
            return repeated
        seen.add(key)
    return obj  # not reached: fewer keys than pairs means one came twice


def _whole_number(digits: str) -> int:
    """An integer literal within 64 bits, what MNN's reader (rapidjson) takes as one;
    the length is checked first, as Python refuses to convert one of 4,300 digits."""
    if len(digits.lstrip("-")) <= WHOLE_NUMBER_DIGITS:
        value = int(digits)
        if WHOLE_NUMBER_RANGE[0] <= value < WHOLE_NUMBER_RANGE[1]:
            return value
    shown = digits if len(digits) <= 24 else f"{digits[:12]}…"
    raise _Refused(
        f"the number {shown} ({len(digits.lstrip('-')):,} digits) is beyond any sane size "
        "(at most 64 bits)"
    )


class _NotFinite(_Refused):
    """NaN, Infinity or a number too large for a double: Python's reader takes them,
    JSON and MNN's reader (rapidjson, without its NaN flag) do not."""

    def __init__(self, literal: str, problem: str) -> None:
        super().__init__(problem)
        self.literal = literal


def _constant(literal: str) -> float:
    raise _NotFinite(
        literal, f"{literal} is not a number JSON allows (MNN's reader refuses it); write a number"
    )


def _finite_number(literal: str) -> float:
    value = float(literal)
    if math.isfinite(value):
        return value
    raise _NotFinite(literal, f"the number {literal} is too large for MNN's reader (a double)")


def _position(text: str, literal: str) -> tuple[int, int]:
    """Line and column of the first `literal` outside strings that starts a value; (0,
    0) when not found (the parse found it, so that does not happen)."""
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif text.startswith(literal, i) and (i == 0 or text[i - 1] not in "0123456789.+-eE"):
            return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1
    return 0, 0


def _repeated_key(value: Any) -> str | None:
    """Where the first object with a repeated key is, as `key` or `outer.key`; walked
    without recursion, as the nesting is as deep as the file makes it."""
    todo: list[tuple[Any, str]] = [(value, "")]
    while todo:
        item, where = todo.pop()
        if isinstance(item, _Repeated):
            return f"{where}.{item.key}" if where else item.key
        if isinstance(item, dict):
            children = [(v, f"{where}.{k}" if where else k) for k, v in item.items()]
        elif isinstance(item, list):
            children = [(v, f"{where}[{i}]") for i, v in enumerate(item)]
        else:
            continue
        todo.extend(reversed(children))  # depth first, in the file's order
    return None


def parse_json(text: str, path: Path) -> Any:
    """Parse JSON text; errors carry line and column. Refused too, as readers disagree
    on them: a key given twice in one object (MNN's reader takes the first, Python's
    the last, so a check of one reading proves nothing about the other), a number
    beyond 64 bits, and NaN, Infinity and -Infinity (not JSON: Python's reader takes
    them, MNN's refuses the file) or a number too large for a double."""
    if not text.strip():
        raise EmptyFileError(path, "file is empty")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object,
            parse_int=_whole_number,
            parse_float=_finite_number,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise InvalidJsonError(path, exc.msg, exc.lineno, exc.colno) from None
    except _NotFinite as exc:
        raise InvalidJsonError(path, str(exc), *_position(text, exc.literal)) from None
    except _Refused as exc:
        raise InvalidJsonError(path, str(exc)) from None
    except RecursionError:
        raise InvalidJsonError(path, "nested too deeply") from None
    repeated = _repeated_key(value)
    if repeated is not None:
        raise InvalidJsonError(
            path,
            f"the key {repeated!r} is given twice: MNN reads the first, other readers the last",
        )
    return value


def read_json(path: Path) -> Any:
    return parse_json(read_text(path, JSON_SIZE_LIMIT), path)


def read_json_object(path: Path) -> dict[str, Any]:
    """Read a JSON file whose top level must be an object."""
    value = read_json(path)
    if not isinstance(value, dict):
        raise InvalidJsonError(path, f"expected an object at the top, found {type(value).__name__}")
    return value


def atomic_write_bytes(
    path: Path, data: bytes, shared: bool = False, mode: int | None = None
) -> None:
    """Write data so that readers see either the old file or the new one.

    A new file is private to the user (0600) unless `shared`: a file the user asked
    for (an export) gets the permissions their umask gives new files, as any program's
    would. A replaced file keeps its own. `mode`, when given, is the file's mode
    whatever it replaces (a copy of a file keeps the permissions of what it copies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _shared_temp(path) if shared else _private_temp(path)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None and path.exists():
            mode = path.stat().st_mode & 0o7777  # keep those of the file we replace
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def _private_temp(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


def _shared_temp(path: Path) -> tuple[int, str]:
    """A temporary file created with mode 0666, which the kernel cuts by the umask
    (reading the umask would mean setting it, for every thread at once)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        name = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o666), name
        except FileExistsError:
            continue


def remove_stale_temps(path: Path) -> int:
    """Delete temporary files an interrupted atomic write of `path` left behind.

    Only while holding a lock that every writer of `path` holds for its whole write
    (recipe/save_lock.py for recipes): without it, a temporary file found here may be
    another process's write under way, which would then fail to replace `path`."""
    removed = 0
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()
            removed += 1
    return removed


def atomic_write_text(path: Path, text: str, shared: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), shared)


def atomic_write_json(
    path: Path, value: Any, indent: int | str | None = 4, shared: bool = False
) -> None:
    # allow_nan=False: a NaN written would make a file that parse_json refuses to read
    # back (a store would then be set aside whole); refused here, the old file stays.
    text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    atomic_write_text(path, text + "\n", shared)


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open folders this way.
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
