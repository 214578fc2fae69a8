"""What a pack folder must be before its files are read: a folder (not a file, a loop
or a dangling link), whose configs name files inside it, and whose model files hold
something."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.infra.errors import (
    BadValueError,
    EmptyFileError,
    MissingFileError,
    NotABundleError,
    OutsideFolderError,
    UnreadableFileError,
)
from app.core.pack.files import (
    AUDIO_MODEL,
    CONTEXT,
    EMBEDDINGS,
    LLM_CONFIG,
    LLM_MODEL,
    LLM_WEIGHT,
    TOKENIZER_TXT,
    VISUAL_MODEL,
)

# MNN's LlmConfig keys that name files relative to the bundle, with MNN's defaults.
PATH_KEYS = {
    "llm_config": LLM_CONFIG,
    "llm_model": LLM_MODEL,
    "llm_weight": LLM_WEIGHT,
    "tokenizer_file": TOKENIZER_TXT,
    "embedding_file": EMBEDDINGS,
    "visual_model": VISUAL_MODEL,
    "audio_model": AUDIO_MODEL,
    "context_file": CONTEXT,
}


def require_folder(folder: Path) -> None:
    """Refuse a path that is not a folder, saying which it is: a file given for a pack
    folder (config.json itself, say) is not a folder that went missing."""
    if folder.is_dir():
        return
    if folder.exists():
        raise NotABundleError(folder, "this is a file, not a pack folder")
    if folder.is_symlink():  # exists() is False for a link that loops or dangles
        try:
            folder.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise NotABundleError(folder, "a symbolic link that loops back on itself") from None
        raise NotABundleError(folder, f"a symbolic link to {os.readlink(folder)}, which is missing")
    raise NotABundleError(folder, "folder not found")


def check_paths_inside(folder: Path, config: Mapping[str, Any], config_path: Path) -> None:
    root = os.path.realpath(folder)
    base_dir = config.get("base_dir")
    if base_dir is not None:
        _refuse_nul(str(base_dir), "base_dir", config_path)
        if os.path.realpath(folder / str(base_dir)) != root:
            raise OutsideFolderError(
                config_path, f"base_dir {base_dir!r} points away from the pack"
            )
    for key in PATH_KEYS:
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise BadValueError(config_path, f"{key} must be a file name, found {value!r}")
        _refuse_nul(value, key, config_path)
        target = os.path.realpath(folder / value)
        if os.path.commonpath([root, target]) != root:
            raise OutsideFolderError(config_path, f"{key} {value!r} points outside the pack folder")


def _refuse_nul(value: str, key: str, config_path: Path) -> None:
    """No file name holds a NUL: MNN's C strings end at it (it would open the name
    before it) and Python refuses such a path outright."""
    if "\0" in value:
        raise BadValueError(
            config_path, f"{key} {value!r} holds a NUL character, which no file name can"
        )


def require_nonempty(path: Path, what: str) -> int:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise MissingFileError(path, f"{what} is missing") from None
    except OSError as exc:
        raise UnreadableFileError(path, exc.strerror or str(exc)) from None
    if not path.is_file():
        raise UnreadableFileError(path, f"{what} is not a file")
    if size == 0:
        raise EmptyFileError(path, f"{what} is empty")
    return size
