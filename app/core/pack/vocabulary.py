"""What a tokenizer file's ids mean: the bytes of every token, whatever the file format.

In a pair the target encodes the text and the draft only ever sees token ids, so a draft
serves a target when each id means the same bytes to both. Files of different eras spell
the same vocabulary differently: MNN's exporter 3.1-3.4 writes `tokenizer.txt` (base64
lines for tiktoken, byte-level text for huggingface, the added tokens as ordinary lines),
llmexport and MNN 3.6 write `tokenizer.mtok` (a binary BPE model with the added tokens in
a section of their own). `vocabulary_digest` hashes the id -> bytes table, so two files
compare equal exactly when their ids mean the same bytes.

Reading a 151,936-token vocabulary takes a few hundred milliseconds, so this runs only
when two files differ, once per file content.
"""

from __future__ import annotations

import binascii
import hashlib
import struct
import threading
from itertools import accumulate
from pathlib import Path

from app.core.infra.errors import TokenizerError
from app.core.infra.jsonfile import read_regular_bytes
from app.core.pack.added_tokens import BYTE_LEVEL_BYTES, model_reader, split_lines
from app.core.pack.tokenizer_info import TokenizerInfo

_U16_U32 = struct.Struct("<HI")
# Tokens per C-level step. This runs on the window's worker thread, and a C call over a
# whole 151,936-token vocabulary (a join, a set, a translate) holds the GIL for 20-80 ms
# on a busy 2-core machine: the GUI thread, waiting for it at each call into Python,
# froze that long. A slice is a millisecond or two; the thread can switch between them.
SLICE = 4096
_DIGESTS: dict[str, str] = {}
_LOCK = threading.Lock()


def vocabulary_digest(path: Path, tokenizer: TokenizerInfo) -> str:
    """sha256 of the id -> bytes table of the tokenizer file at `path`; raises a
    TokenizerError naming the file when its vocabulary cannot be read."""
    with _LOCK:
        known = _DIGESTS.get(tokenizer.sha256)
    if known is not None:
        return known
    data = read_regular_bytes(path, "tokenizer file")
    start = _body_start(data)
    if tokenizer.type == "pipeline":
        table = _mtok_table(path, data, start)
    else:
        table = _txt_table(path, data, start, tokenizer.type)
    for token in tokenizer.added_tokens:
        table.setdefault(token.id, token.text.encode("utf-8"))
    # Built with map() throughout: this runs over every token of the vocabulary.
    # In id order without one C-level sort of it all (an mtok file's ids are not in
    # order: 57 ms holding the GIL, see SLICE). Ids are dense, so walk them.
    dense = bool(table) and min(table) >= 0 and max(table) < 2 * len(table) + SLICE
    ids = [i for i in range(max(table) + 1) if i in table] if dense else sorted(table)
    blobs = [table[i] for i in ids]
    lengths = (n & 0xFFFF for n in map(len, blobs))
    digest = hashlib.sha256(b"".join(map(_U16_U32.pack, lengths, ids)))
    for at in range(0, len(blobs), SLICE):
        digest.update(b"".join(blobs[at : at + SLICE]))
    value = digest.hexdigest()
    with _LOCK:
        _DIGESTS[tokenizer.sha256] = value
    return value


def _body_start(data: bytes) -> int:
    at = 0
    for _ in range(3):
        at = data.index(b"\n", at) + 1
    return at


def _txt_table(path: Path, data: bytes, start: int, kind: str) -> dict[int, bytes]:
    lines = split_lines(data, start)
    try:
        size = int(lines[0].split()[0])
    except (IndexError, ValueError):
        raise TokenizerError(path, "vocabulary count line is not a number") from None
    if len(lines) - 1 < size:
        raise TokenizerError(path, f"vocabulary promises {size} lines but the file has fewer")
    table: dict[int, bytes] = {}
    for token_id, line in enumerate(lines[1 : size + 1]):
        if kind == "huggingface":
            table[token_id] = _unspell(line.decode("utf-8", "replace"))
            continue
        field = line.split(b" ", 1)[0] if kind == "sentencepiece" else line
        try:
            table[token_id] = binascii.a2b_base64(field)
        except binascii.Error:
            raise TokenizerError(path, f"vocabulary line {token_id} is not base64") from None
    return table


def _mtok_table(path: Path, data: bytes, start: int) -> dict[int, bytes]:
    reader = model_reader(path, data, start)
    kind = reader.u8()
    if kind != 0:
        # WordPiece and Unigram vocabularies are compared by file content only.
        return {}
    count = reader.count(6, "vocabulary")
    reader.skip(2)  # byte_fallback and a flag llmexport 0.0.5 leaves 0 for Qwen
    reader.u32()  # merges
    reader.section = "model vocabulary"
    table: dict[int, bytes] = {}
    pos = reader.pos
    try:
        for _ in range(count):
            length = data[pos] | data[pos + 1] << 8
            raw = data[pos + 2 : pos + 2 + length]
            (token_id,) = struct.unpack_from("<I", data, pos + 2 + length)
            pos += 6 + length
            table[token_id] = raw
    except (IndexError, struct.error):
        raise reader.fail("the vocabulary runs past the end of the file") from None
    # Byte-level BPE (GPT-2, Qwen, Llama 3) spells every byte as one of 256 characters:
    # when every entry is spelled so, the table holds spellings, not bytes.
    spelled = [raw.decode("utf-8", "replace") for raw in table.values()]
    slices = range(0, len(spelled), SLICE)
    if not all(set("".join(spelled[at : at + SLICE])) <= BYTE_LEVEL_BYTES.keys() for at in slices):
        return table
    # One character is one byte: unspell a slice at once, then cut at the same places.
    ids = list(table)
    unspelled: dict[int, bytes] = {}
    for at in slices:
        part = spelled[at : at + SLICE]
        ends = list(accumulate(map(len, part)))
        raw_all = _unspell("".join(part))
        pieces = map(raw_all.__getitem__, map(slice, [0, *ends[:-1]], ends))
        unspelled.update(zip(ids[at : at + SLICE], pieces, strict=True))
    return unspelled


# Byte-level spelling -> the byte, as a str.translate table (latin-1 keeps bytes as is).
_UNSPELL = {ord(c): chr(b) for c, b in BYTE_LEVEL_BYTES.items()}


def _unspell(text: str) -> bytes:
    return text.translate(_UNSPELL).encode("latin-1", "replace")
