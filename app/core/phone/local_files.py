"""A pack's files as they are on this computer: which of them go to a phone (only its
regular files inside its folder: pack/sendable.py), and their sha256."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

from app.core.infra.errors import PhoneError
from app.core.pack.bundle import BundleFile, BundleInfo, read_bundle
from app.core.pack.files import NOT_PACK_SUFFIXES
from app.core.pack.sendable import SendableFile, sendable_files
from app.core.phone.sync_send import PushCancelled


def pack_files(folder: Path, recipe_only: bool = False) -> tuple[SendableFile, ...]:
    """The files of a pack to put on a phone; a broken pack, or one holding what is not
    one of its regular files, is refused by name."""
    info = read_bundle(folder)
    return sendable_files(info.path, [f.name for f in wanted_files(info, recipe_only)])


def wanted_files(info: BundleInfo, recipe_only: bool = False) -> list[BundleFile]:
    """The files of an already read pack that go to a phone, as listed (unchecked)."""
    if recipe_only:
        wanted = set(info.recipe_files)
        if not wanted:
            raise PhoneError(f"{info.path} has no recipe files to push.", "no_recipes")
    else:
        wanted = {f.name for f in info.files if not f.name.endswith(NOT_PACK_SUFFIXES)}
    return [f for f in info.files if f.name in wanted]


_hash_cache: dict[tuple[str, int, int, int], str] = {}
_hash_lock = threading.Lock()


def local_sha256(item: SendableFile, cancelled: Callable[[], bool] = lambda: False) -> str:
    """sha256 of a pack's file, remembered while it is the same file of the same size and
    mtime."""
    info = item.path.stat()
    key = (str(item.path), info.st_ino, info.st_size, info.st_mtime_ns)
    with _hash_lock:
        if key in _hash_cache:
            return _hash_cache[key]
    digest = hashlib.sha256()
    with item.open() as handle:
        while block := handle.read(1 << 20):
            if cancelled():
                raise PushCancelled(str(item.path))
            digest.update(block)
    with _hash_lock:
        _hash_cache[key] = digest.hexdigest()
    return digest.hexdigest()
