"""An MNN tokenizer file (`tokenizer.txt` or llmexport's `tokenizer.mtok`), described.

Both start with three text lines: `magic type`, `n_special n_stop n_prefix`, then the
special, stop and prefix ids. After the header this reads only the added tokens (see
added_tokens.py); the vocabulary and merges are skipped.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from app.core.infra.errors import EmptyFileError, TokenizerError
from app.core.infra.jsonfile import read_regular_bytes
from app.core.pack.added_tokens import AddedToken, TokenizerBody, read_mtok_body, read_txt_specials

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
# Parsed tokenizer bodies by content (see _read_body); a body holds only added tokens.
_MAX_CACHED = 32
_BODIES: dict[tuple[str, int, str, tuple[int, ...]], TokenizerBody] = {}
_CACHE_LOCK = threading.Lock()


@dataclass(frozen=True)
class StopToken:
    """A token that ends a reply, with every place in the pack that says so."""

    id: int
    text: str | None  # None when the token is not one the tokenizer file names
    sources: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "source": self.sources[0],
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class TokenizerInfo:
    file: str
    type: str
    special_ids: tuple[int, ...]
    stop_ids: tuple[int, ...]  # every stop id: the header's, then the rest of the pack's
    prefix_ids: tuple[int, ...]
    sha256: str
    size_bytes: int
    file_stop_ids: tuple[int, ...]  # only the stop ids in the tokenizer file's header
    stop_tokens: tuple[StopToken, ...]  # stop_ids with their text and sources
    added_tokens: tuple[AddedToken, ...]
    eos_text: str | None  # the eos token text the file carries (mtok only)
    chat_template: str | None  # the jinja template the file carries (mtok only)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "type": self.type,
            "sha256": self.sha256,
            "special_ids": list(self.special_ids),
            "stop_ids": list(self.stop_ids),
            "stop_tokens": [stop.to_json() for stop in self.stop_tokens],
            "prefix_ids": list(self.prefix_ids),
            "size_bytes": self.size_bytes,
        }

    @cached_property
    def added_bytes(self) -> Mapping[int, bytes]:
        """The text of each added token, which the engine uses instead of MNN's decode."""
        return {token.id: token.text.encode("utf-8") for token in self.added_tokens}

    def token_id(self, text: str) -> int | None:
        """The id of the added token with exactly this text, if there is one."""
        for token in self.added_tokens:
            if token.text == text:
                return token.id
        return None

    def token_text(self, token_id: int) -> str | None:
        for token in self.added_tokens:
            if token.id == token_id:
                return token.text
        return None

    def with_stops(self, found: Iterable[tuple[int, str]]) -> TokenizerInfo:
        """A copy that also stops on these (id, source) pairs; known ids gain a source."""
        merged: dict[int, list[str]] = {s.id: list(s.sources) for s in self.stop_tokens}
        for token_id, source in found:
            sources = merged.setdefault(token_id, [])
            if source not in sources:
                sources.append(source)
        stops = tuple(
            StopToken(token_id, self.token_text(token_id), tuple(sources))
            for token_id, sources in merged.items()
        )
        return replace(self, stop_ids=tuple(merged), stop_tokens=stops)


def _ints(line: bytes, path: Path, what: str) -> list[int]:
    try:
        return [int(part) for part in line.split()]
    except ValueError:
        shown = line[:60].decode("utf-8", "replace").strip()
        raise TokenizerError(path, f"{what} line is not numbers: {shown!r}") from None


def read_tokenizer_info(path: Path) -> TokenizerInfo:
    data = read_regular_bytes(path, "tokenizer file")
    if not data:
        raise EmptyFileError(path, "tokenizer file is empty")
    digest = hashlib.sha256(data).hexdigest()
    stream = io.BytesIO(data)
    lines = [stream.readline(_MAX_HEADER_LINE) for _ in range(3)]
    body_start = stream.tell()

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
    special_ids = tuple(ids[:n_special])
    stop_ids = tuple(ids[n_special : n_special + n_stop])
    body = _read_body(path, data, digest, body_start, kind, special_ids)
    info = TokenizerInfo(
        file=path.name,
        type=kind,
        special_ids=special_ids,
        stop_ids=(),
        prefix_ids=tuple(ids[n_special + n_stop :]),
        sha256=digest,
        size_bytes=len(data),
        file_stop_ids=stop_ids,
        stop_tokens=(),
        added_tokens=body.added,
        eos_text=body.eos_text,
        chat_template=body.chat_template,
    )
    found = [(token_id, path.name) for token_id in stop_ids]
    if body.eos_text is not None:
        eos_id = info.token_id(body.eos_text)
        if eos_id is not None:
            found.append((eos_id, f"{path.name} eos_token"))
    return info.with_stops(found)


def _read_body(
    path: Path, data: bytes, digest: str, start: int, kind: str, special_ids: tuple[int, ...]
) -> TokenizerBody:
    """Parsed once per distinct file content: every pack of a family shares its tokenizer,
    and a pair's bundles are read again when it loads."""
    key = (digest, start, kind, special_ids)
    with _CACHE_LOCK:
        body = _BODIES.get(key)
    if body is not None:
        return body
    if kind == "pipeline":
        body = read_mtok_body(path, data, start)
    else:
        body = read_txt_specials(path, data, start, kind, special_ids)
    with _CACHE_LOCK:
        if len(_BODIES) >= _MAX_CACHED:
            del _BODIES[next(iter(_BODIES))]
        _BODIES[key] = body
    return body
