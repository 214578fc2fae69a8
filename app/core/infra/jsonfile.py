"""Reading JSON with precise error positions, and atomic writes.

Atomic writes follow qutebrowser's savefile idea: write a temporary file in the same
folder, fsync it, then replace the target, so a crash leaves the old or the new file,
never a torn one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.core.infra.errors import (
    EmptyFileError,
    InvalidJsonError,
    MissingFileError,
    UnreadableFileError,
)


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


def read_text(path: Path) -> str:
    """Read a UTF-8 text file, turning OS and decoding errors into typed ones."""
    with reading(path):
        data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(path, f"not UTF-8 text (byte {exc.start})") from None


def parse_json(text: str, path: Path) -> Any:
    """Parse JSON text; errors carry line and column."""
    if not text.strip():
        raise EmptyFileError(path, "file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidJsonError(path, exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:
        raise InvalidJsonError(path, "nested too deeply") from None


def read_json(path: Path) -> Any:
    return parse_json(read_text(path), path)


def read_json_object(path: Path) -> dict[str, Any]:
    """Read a JSON file whose top level must be an object."""
    value = read_json(path)
    if not isinstance(value, dict):
        raise InvalidJsonError(path, f"expected an object at the top, found {type(value).__name__}")
    return value


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write data so that readers see either the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            # Keep the original permissions of the file we replace.
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def remove_stale_temps(path: Path) -> int:
    """Delete temporary files an interrupted atomic write of `path` left behind."""
    removed = 0
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()
            removed += 1
    return removed


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any, indent: int | str | None = 4) -> None:
    atomic_write_text(path, json.dumps(value, indent=indent, ensure_ascii=False) + "\n")


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
