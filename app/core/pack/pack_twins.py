"""A pack that duplicates one already installed: another pack of its name (the lists then
tell them apart, pack_names.py) or the same model files under another name. Said when
a download installs one, so that a second copy never arrives without a word."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from app.core.pack.bundle import BundleInfo
from app.core.pack.files import NOT_PACK_SUFFIXES
from app.core.pack.library import PackEntry
from app.core.pack.pack_names import display_names

# Recipes and cards are the user's to edit: two copies of one model differ there.
_NOT_MODEL_SUFFIXES = (".json", ".md", *NOT_PACK_SUFFIXES)


def twin_notes(pack: Path, entries: Sequence[PackEntry]) -> list[str]:
    """One line per installed pack that `pack` (one of `entries`) duplicates."""
    mine = next((e for e in entries if e.path == pack), None)
    if mine is None or mine.info is None:
        return []
    labels = display_names(entries)
    notes = []
    for other in entries:
        if other.path == pack:
            continue
        same_name = other.name.casefold() == mine.name.casefold()
        same_files = other.info is not None and same_model_files(mine.info, other.info)
        if same_name:
            what = "the same model files" if same_files else "a different pack"
            notes.append(
                f"a pack of this name was already installed ({what}, {other.path}): the "
                f"lists show them as “{labels[pack]}” and “{labels[other.path]}”"
            )
        elif same_files:
            notes.append(
                f"it holds the same model files as “{labels[other.path]}” ({other.path}), "
                "already installed"
            )
    return notes


def same_model_files(a: BundleInfo, b: BundleInfo) -> bool:
    """The same graph, weights and tokenizer: the same names and sizes, then the same
    bytes (two fine-tunes of one model at one quantization differ only there)."""
    mine, theirs = _model_files(a), _model_files(b)
    if not mine or mine != theirs:
        return False
    return all(_sha256(a.path / name) == _sha256(b.path / name) for name in mine)


def _model_files(info: BundleInfo) -> dict[str, int]:
    return {f.name: f.size for f in info.files if not f.name.endswith(_NOT_MODEL_SUFFIXES)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    except OSError:  # gone or unreadable since the reading: not known to be the same
        return f"unreadable: {path}"
    return digest.hexdigest()
