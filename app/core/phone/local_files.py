"""A pack's files as they are on this computer: which of them go to a phone, and their
sha256."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import PhoneError
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.files import NOT_PACK_SUFFIXES
from app.core.phone.sync_send import PushCancelled


@dataclass(frozen=True)
class LocalFile:
    rel: str  # posix path inside the pack
    path: Path
    size: int


def pack_files(folder: Path, recipe_only: bool = False) -> list[LocalFile]:
    """The files of a pack to put on a phone; a broken pack is refused by name."""
    return files_of(read_bundle(folder), recipe_only)


def files_of(info: BundleInfo, recipe_only: bool = False) -> list[LocalFile]:
    """The files of an already read pack to put on a phone."""
    if recipe_only:
        wanted = set(info.recipe_files)
        if not wanted:
            raise PhoneError(f"{info.path} has no recipe files to push.", "no_recipes")
    else:
        wanted = {f.name for f in info.files if not f.name.endswith(NOT_PACK_SUFFIXES)}
    return [LocalFile(f.name, info.path / f.name, f.size) for f in info.files if f.name in wanted]


_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def local_sha256(path: Path, cancelled: Callable[[], bool] = lambda: False) -> str:
    """sha256 of a local file, remembered while its size and mtime stay the same."""
    info = path.stat()
    key = (str(path), info.st_size, info.st_mtime_ns)
    with _hash_lock:
        if key in _hash_cache:
            return _hash_cache[key]
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            if cancelled():
                raise PushCancelled(str(path))
            digest.update(block)
    with _hash_lock:
        _hash_cache[key] = digest.hexdigest()
    return digest.hexdigest()
