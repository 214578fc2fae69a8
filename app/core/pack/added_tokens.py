"""The added tokens of an MNN tokenizer file, read from the file itself.

MNN 3.6.1 decodes every added token (Qwen3's `<think>`, `</think>`, `<|im_end|>`, tool
and fim tokens) of a `tokenizer.mtok` to empty bytes, although the file lists their
text. This module reads that list so the engine can decode them itself.

`tokenizer.mtok` (llmexport 0.0.5 `export_mtok`, read by MNN's
`PipelineTokenizer::load_vocab_binary`): after the three header lines comes a
little-endian binary body, in this order:

- normalizer, pre-tokenizer: a type byte, its fields, nested sequences;
- model: type byte (0 BPE, 1 WordPiece, 2 Unigram), u32 vocabulary size, type fields,
  then the vocabulary as (u16 length, bytes, u32 id[, f64 score]) and, for BPE, merges
  as three u32 each. These are skipped by their lengths, never decoded;
- decoder: a type byte and its fields;
- added tokens: u32 count, then per token u32 id, u8 special, u8 lstrip, u8 rstrip,
  u16 length and the UTF-8 content;
- optional, each only if bytes remain: u32 length + chat template, u16 length + eos
  token text, u8 flags, u16 length + bos token text. MNN ignores anything after that.

The older text format `tokenizer.txt` has no added-token section: the ids the header
calls special are ordinary lines of the vocabulary (base64 for sentencepiece, tiktoken
and bert; byte-level text for huggingface), which MNN decodes. They are read the same
way here so that a marker such as `<|im_end|>` can be turned into its id.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import TokenizerError

# Sequences nest; real files nest two deep. Deeper means a corrupt file.
_MAX_NESTING = 16
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
# Bytes of tokenizer.txt split per C call. Files are read on the window's worker
# thread, and one split of a 151,936-line file holds the GIL for 10-25 ms on a busy
# machine: the GUI thread waits that long at its next call into Python.
LINES_CHUNK = 1 << 16


def split_lines(data: bytes, start: int) -> list[bytes]:
    """`data[start:].split(b"\\n")`, LINES_CHUNK bytes per C call."""
    lines: list[bytes] = []
    while (end := data.find(b"\n", start + LINES_CHUNK)) >= 0:
        lines.extend(data[start:end].split(b"\n"))
        start = end + 1
    lines.extend(data[start:].split(b"\n"))
    return lines


@dataclass(frozen=True)
class AddedToken:
    id: int
    text: str
    special: bool
    lstrip: bool = False
    rstrip: bool = False


@dataclass(frozen=True)
class TokenizerBody:
    """What a tokenizer file says beyond its header."""

    added: tuple[AddedToken, ...]
    eos_text: str | None = None  # tokenizer_config.json's eos_token, as llmexport kept it
    chat_template: str | None = None  # the jinja template the file carries (mtok only)


class ByteReader:
    """Reads the binary body, turning every overrun into an error that names the file."""

    def __init__(self, path: Path, data: bytes, pos: int) -> None:
        self.path = path
        self.data = data
        self.pos = pos
        self.section = "normalizer"

    def fail(self, problem: str) -> TokenizerError:
        return TokenizerError(self.path, f"{problem} in the {self.section} (byte {self.pos})")

    def need(self, count: int) -> None:
        if count < 0 or self.pos + count > len(self.data):
            raise TokenizerError(
                self.path,
                f"file ends inside the {self.section} (byte {self.pos} needs {count} more, "
                f"file has {len(self.data)}): truncated or not an MNN tokenizer",
            )

    def skip(self, count: int) -> None:
        self.need(count)
        self.pos += count

    def u8(self) -> int:
        self.need(1)
        self.pos += 1
        return self.data[self.pos - 1]

    def u16(self) -> int:
        self.need(2)
        (value,) = _U16.unpack_from(self.data, self.pos)
        self.pos += 2
        return int(value)

    def u32(self) -> int:
        self.need(4)
        (value,) = _U32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(value)

    def short_bytes(self) -> bytes:
        length = self.u16()
        self.need(length)
        self.pos += length
        return self.data[self.pos - length : self.pos]

    def text(self, what: str) -> str:
        raw = self.short_bytes()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8 text") from None

    def count(self, item_size: int, what: str) -> int:
        """A u32 count of items of at least `item_size` bytes, checked against the file."""
        n = self.u32()
        if n * item_size > len(self.data) - self.pos:
            raise self.fail(f"{what} count {n} does not fit in the rest of the file")
        return n

    def skip_entries(self, count: int, before: int, after: int) -> None:
        """Skip `count` entries of (`before` bytes, u16 length, bytes, `after` bytes).

        Only the lengths are read: this is the hot loop at a 151,936-token vocabulary.
        """
        data, pos, step = self.data, self.pos + before, 2 + before + after
        try:
            for _ in range(count):
                pos += data[pos] + (data[pos + 1] << 8) + step
        except IndexError:
            pos = len(data) + 1
        pos -= before
        if pos > len(data):
            raise TokenizerError(
                self.path,
                f"file ends inside the {self.section} ({count} entries from byte {self.pos} "
                f"run past its {len(data)} bytes): truncated or not an MNN tokenizer",
            )
        self.pos = pos


def model_reader(path: Path, data: bytes, start: int) -> ByteReader:
    """A reader at the model section of the `tokenizer.mtok` body that begins at `start`."""
    reader = ByteReader(path, data, start)
    _skip_normalizer(reader, 0)
    reader.section = "pre-tokenizer"
    _skip_pre_tokenizer(reader, 0)
    reader.section = "model"
    return reader


def read_mtok_body(path: Path, data: bytes, start: int) -> TokenizerBody:
    """Parse the binary body of a `tokenizer.mtok` that begins at byte `start`."""
    reader = model_reader(path, data, start)
    _skip_model(reader)
    reader.section = "decoder"
    _skip_decoder(reader, 0)
    reader.section = "added tokens"
    added: list[AddedToken] = []
    for _ in range(reader.count(9, "added token")):
        token_id = reader.u32()
        special, lstrip, rstrip = reader.u8(), reader.u8(), reader.u8()
        text = reader.text(f"added token {token_id}")
        added.append(AddedToken(token_id, text, bool(special), bool(lstrip), bool(rstrip)))
    # The rest is optional (older writers stop here); MNN reads each part only if bytes
    # remain, and so does this.
    reader.section = "chat template"
    eos = template = None
    if reader.pos < len(data):
        length = reader.u32()
        reader.need(length)
        template = data[reader.pos : reader.pos + length].decode("utf-8", "replace") or None
        reader.skip(length)
    if reader.pos < len(data):
        reader.section = "eos token"
        eos = reader.text("eos token") or None
    if reader.pos < len(data):
        reader.u8()  # flags
    if reader.pos < len(data):
        reader.section = "bos token"
        reader.text("bos token")  # checked like the rest, but nothing here needs it
    return TokenizerBody(tuple(added), eos, template)


def _nested(reader: ByteReader, depth: int) -> int:
    if depth >= _MAX_NESTING:
        raise reader.fail(f"sequences nested more than {_MAX_NESTING} deep")
    return reader.count(1, "sequence")


def _skip_norm_table(reader: ByteReader) -> None:
    # Entries are (u32 code point, u16 length, bytes).
    reader.skip_entries(reader.count(6, "table entry"), 4, 0)


def _skip_normalizer(reader: ByteReader, depth: int) -> None:
    kind = reader.u8()
    if kind in (0, 1):  # none; NFKC of the old format without a table
        return
    if kind == 2:  # Prepend
        reader.short_bytes()
    elif kind == 3:  # Replace: pattern, content
        reader.short_bytes()
        reader.short_bytes()
    elif kind == 4:  # Sequence
        for _ in range(_nested(reader, depth)):
            _skip_normalizer(reader, depth + 1)
    elif kind == 5:  # BertNormalizer / Lowercase
        reader.skip(4)
    elif kind == 6:  # NFKC / NFC with its table
        _skip_norm_table(reader)
    elif kind == 7:  # BertNormalizer stripping accents, with an NFD table if it strips
        reader.skip(2)
        strip = reader.u8()
        reader.skip(1)
        if strip:
            _skip_norm_table(reader)
    elif kind == 8:  # Strip
        reader.skip(2)
    else:
        raise reader.fail(f"unknown normalizer type {kind}")


def _skip_pre_tokenizer(reader: ByteReader, depth: int) -> None:
    kind = reader.u8()
    if kind in (0, 5):  # none; BertPreTokenizer
        return
    if kind in (1, 2):  # ByteLevel (use_regex); Digits (individual)
        reader.skip(1)
    elif kind == 3:  # Metaspace: replacement, add_prefix_space
        reader.short_bytes()
        reader.skip(1)
    elif kind == 4:  # Split: pattern, invert, behavior
        reader.short_bytes()
        reader.skip(2)
    elif kind == 6:  # Sequence
        for _ in range(_nested(reader, depth)):
            _skip_pre_tokenizer(reader, depth + 1)
    else:
        raise reader.fail(f"unknown pre-tokenizer type {kind}")


def _skip_model(reader: ByteReader) -> None:
    kind = reader.u8()
    if kind == 0:  # BPE
        vocab = reader.count(6, "vocabulary")
        reader.skip(2)  # byte_fallback, byte_level
        merges = reader.u32()
        reader.section = "model vocabulary"
        reader.skip_entries(vocab, 0, 4)
        reader.section = "model merges"
        if merges * 12 > len(reader.data) - reader.pos:
            raise reader.fail(f"merge count {merges} does not fit in the rest of the file")
        reader.skip(merges * 12)
    elif kind == 1:  # WordPiece: unk token, prefix, max chars, vocabulary
        vocab = reader.count(6, "vocabulary")
        reader.short_bytes()
        reader.short_bytes()
        reader.skip(4)
        reader.section = "model vocabulary"
        reader.skip_entries(vocab, 0, 4)
    elif kind == 2:  # Unigram: unk id, byte fallback, vocabulary with f64 scores
        vocab = reader.count(14, "vocabulary")
        reader.skip(5)
        reader.section = "model vocabulary"
        reader.skip_entries(vocab, 0, 12)
    else:
        raise reader.fail(f"unknown model type {kind} (expected BPE, WordPiece or Unigram)")


def _skip_decoder(reader: ByteReader, depth: int) -> None:
    kind = reader.u8()
    if kind in (0, 1, 4):  # ByteLevel (also written for none), ByteFallback, Fuse
        return
    if kind in (2, 3):  # Metaspace: replacement, add_prefix_space; WordPiece: prefix, cleanup
        reader.short_bytes()
        reader.skip(1)
    elif kind == 5:  # Replace: pattern, content
        reader.short_bytes()
        reader.short_bytes()
    elif kind == 6:  # Strip: content, start, stop
        reader.short_bytes()
        reader.skip(8)
    elif kind == 7:  # Sequence
        for _ in range(_nested(reader, depth)):
            _skip_decoder(reader, depth + 1)
    else:
        raise reader.fail(f"unknown decoder type {kind}")


# -- tokenizer.txt --------------------------------------------------------------------------


def byte_level_chars() -> dict[int, str]:
    """GPT-2's bytes_to_unicode: the printable character byte-level BPE vocabularies
    write for each byte."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    chars = {b: b for b in keep}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
    return {b: chr(c) for b, c in chars.items()}


# Reversed: the map MNN's huggingface decode applies.
BYTE_LEVEL_BYTES = {c: b for b, c in byte_level_chars().items()}
_BASE64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def read_txt_specials(
    path: Path, data: bytes, start: int, kind: str, special_ids: tuple[int, ...]
) -> TokenizerBody:
    """The text of the header's special ids, from the vocabulary lines of `tokenizer.txt`.

    The vocabulary starts with a count line (`n` or, for huggingface, `n merges`), then
    one line per id.
    """
    _check_whole(path, data, start, kind)
    if not special_ids:
        return TokenizerBody(())
    wanted = max(special_ids)
    lines = split_lines(data, start)  # only lines up to `wanted` + 1 are read
    if len(lines) <= wanted + 2 and not lines[-1]:
        lines.pop()  # the file's final newline ends a line, it does not start one
    size = _counts(path, lines[0])[0]
    added: list[AddedToken] = []
    for token_id in dict.fromkeys(special_ids):
        if not 0 <= token_id < size:
            continue  # MNN decodes ids outside the vocabulary to nothing
        line = lines[token_id + 1]
        text = _txt_token(path, kind, token_id, line)
        added.append(AddedToken(token_id, text, special=True))
    return TokenizerBody(tuple(added))


def _counts(path: Path, line: bytes) -> list[int]:
    """The vocabulary count line: `n`, or `n merges` for huggingface."""
    parts = line.split()
    if parts and all(part.isdigit() for part in parts):  # whole numbers, none negative
        return [int(part) for part in parts]
    shown = line[:60].decode("utf-8", "replace").strip()
    raise TokenizerError(path, f"vocabulary count line is not a number: {shown!r}")


def _check_whole(path: Path, data: bytes, start: int, kind: str) -> None:
    """A file cut short (a download or copy that stopped) still parses as far as it
    goes: count its lines against what the count line promises (one C pass)."""
    first_end = data.find(b"\n", start)
    counts = _counts(path, data[start : first_end if first_end >= 0 else len(data)])
    promised = counts[0] + (counts[1] if kind == "huggingface" and len(counts) > 1 else 0)
    present = data.count(b"\n", start) - 1 + (0 if data.endswith(b"\n") else 1)
    if present < promised:
        raise TokenizerError(
            path,
            f"file ends after {max(present, 0):,} of the {promised:,} vocabulary lines its "
            "count line promises: the download or copy was cut off; download or copy the "
            "pack again",
        )


def _txt_token(path: Path, kind: str, token_id: int, line: bytes) -> str:
    if kind == "huggingface":
        chars = line.decode("utf-8", "replace")
        raw = bytes(BYTE_LEVEL_BYTES[c] for c in chars if c in BYTE_LEVEL_BYTES)
    else:
        raw = _base64(line.split(b" ", 1)[0] if kind == "sentencepiece" else line)
    return raw.decode("utf-8", "replace")


def _base64(field: bytes) -> bytes:
    """MNN's lenient base64: characters outside the alphabet (padding, "\\r") are skipped
    and a last group too short for a byte gives nothing."""
    clean = bytes(c for c in field if c in _BASE64_ALPHABET)
    if len(clean) % 4 == 1:
        clean = clean[:-1]
    return base64.b64decode(clean + b"=" * (-len(clean) % 4))
