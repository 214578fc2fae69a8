"""The header of an MNN tokenizer file (`tokenizer.txt` or llmexport's `tokenizer.mtok`).

Both start with three text lines: `magic type`, `n_special n_stop n_prefix`, then the
special, stop and prefix ids. The rest (vocabulary, merges) is not needed here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import EmptyFileError, TokenizerError
from app.core.jsonfile import reading

TOKENIZER_MAGIC = 430
TOKENIZER_TYPES = {
    0: "sentencepiece",
    1: "tiktoken",
    2: "bert",
    3: "huggingface",
    4: "pipeline",
}
# A header line longer than this means the file is not a tokenizer header.
_MAX_HEADER_LINE = 1 << 20


@dataclass(frozen=True)
class TokenizerInfo:
    file: str
    type: str
    special_ids: tuple[int, ...]
    stop_ids: tuple[int, ...]
    prefix_ids: tuple[int, ...]
    sha256: str
    size_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "type": self.type,
            "sha256": self.sha256,
            "special_ids": list(self.special_ids),
            "stop_ids": list(self.stop_ids),
            "prefix_ids": list(self.prefix_ids),
            "size_bytes": self.size_bytes,
        }


def _ints(line: bytes, path: Path, what: str) -> list[int]:
    try:
        return [int(part) for part in line.split()]
    except ValueError:
        shown = line[:60].decode("utf-8", "replace").strip()
        raise TokenizerError(path, f"{what} line is not numbers: {shown!r}") from None


def read_tokenizer_info(path: Path) -> TokenizerInfo:
    with reading(path, "tokenizer file"):
        size = path.stat().st_size
        if size == 0:
            raise EmptyFileError(path, "tokenizer file is empty")
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            lines = [handle.readline(_MAX_HEADER_LINE) for _ in range(3)]
            handle.seek(0)
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)

    head = _ints(lines[0], path, "first")
    if len(head) != 2 or head[0] != TOKENIZER_MAGIC:
        raise TokenizerError(path, f"not an MNN tokenizer (expected magic {TOKENIZER_MAGIC})")
    kind = TOKENIZER_TYPES.get(head[1])
    if kind is None:
        raise TokenizerError(path, f"unknown tokenizer type {head[1]}")
    counts = _ints(lines[1], path, "second")
    if len(counts) != 3 or min(counts) < 0:
        raise TokenizerError(path, "second line must hold three counts: special, stop, prefix")
    n_special, n_stop, _ = counts
    ids = _ints(lines[2], path, "third") if sum(counts) else []
    if len(ids) != sum(counts):
        raise TokenizerError(
            path, f"header promises {sum(counts)} special/stop/prefix ids but lists {len(ids)}"
        )
    return TokenizerInfo(
        file=path.name,
        type=kind,
        special_ids=tuple(ids[:n_special]),
        stop_ids=tuple(ids[n_special : n_special + n_stop]),
        prefix_ids=tuple(ids[n_special + n_stop :]),
        sha256=digest.hexdigest(),
        size_bytes=size,
    )
