"""Write `tokenizer.mtok` files the way llmexport 0.0.5's `export_mtok` does.

For tests and benchmarks that need shapes the committed fixtures do not have: other
models and decoders, nested sequences, a vocabulary as large as Qwen3's (151,936).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.pack.added_tokens import AddedToken

QWEN3_VOCAB = 151_936
QWEN3_BPE = 151_643  # ids below are the BPE vocabulary; the added tokens follow
QWEN3_MERGES = 151_387


def pack_str(value: str | bytes) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return struct.pack("<H", len(raw)) + raw


def norm_table(entries: Sequence[tuple[int, bytes]]) -> bytes:
    out = [struct.pack("<I", len(entries))]
    for code_point, utf8 in entries:
        out += [struct.pack("<I", code_point), struct.pack("<H", len(utf8)), utf8]
    return b"".join(out)


def bpe_model(vocab: Sequence[bytes], merges: int, byte_level: bool = False) -> bytes:
    """A BPE section: ids in order of `vocab`, entries sorted by token as llmexport does."""
    out = [struct.pack("<BIBBI", 0, len(vocab), 0, int(byte_level), merges)]
    for token_id, token in sorted(enumerate(vocab), key=lambda pair: pair[1]):
        out += [pack_str(token), struct.pack("<I", token_id)]
    out.append(bytes(12 * merges))  # (id1, id2, rank) triples; their values do not matter
    return b"".join(out)


def wordpiece_model(vocab: Sequence[bytes]) -> bytes:
    out = [struct.pack("<BI", 1, len(vocab)), pack_str("[UNK]"), pack_str("##")]
    out.append(struct.pack("<I", 100))
    for token_id, token in sorted(enumerate(vocab), key=lambda pair: pair[1]):
        out += [pack_str(token), struct.pack("<I", token_id)]
    return b"".join(out)


def unigram_model(vocab: Sequence[bytes]) -> bytes:
    out = [struct.pack("<BIIB", 2, len(vocab), 0, 1)]
    for token_id, token in sorted(enumerate(vocab), key=lambda pair: pair[1]):
        out += [pack_str(token), struct.pack("<I", token_id), struct.pack("<d", -token_id)]
    return b"".join(out)


@dataclass
class Mtok:
    model: bytes
    added: Sequence[AddedToken]
    special_ids: Sequence[int] = ()
    stop_ids: Sequence[int] = ()
    normalizer: bytes = b"\x00"
    pre_tokenizer: bytes = b"\x01\x00"  # ByteLevel, no regex
    decoder: bytes = b"\x00"  # ByteLevel
    # None: stop after the added tokens, as older writers did.
    chat_template: str | None = "{{ messages }}"
    eos: str = "<|im_end|>"
    bos: str = ""
    trailing: bytes = field(default=b"")

    def header(self) -> bytes:
        ids = " ".join(map(str, [*self.special_ids, *self.stop_ids]))
        return f"430 4\n{len(self.special_ids)} {len(self.stop_ids)} 0\n{ids}\n".encode()

    def added_section(self) -> bytes:
        out = [struct.pack("<I", len(self.added))]
        for token in self.added:
            flags = (int(token.special), int(token.lstrip), int(token.rstrip))
            out += [struct.pack("<IBBB", token.id, *flags), pack_str(token.text)]
        return b"".join(out)

    def tail(self) -> bytes:
        if self.chat_template is None:
            return b""
        template = self.chat_template.encode()
        return (
            struct.pack("<I", len(template))
            + template
            + pack_str(self.eos)
            + b"\x00"
            + pack_str(self.bos)
        )

    def to_bytes(self) -> bytes:
        return (
            self.header()
            + self.normalizer
            + self.pre_tokenizer
            + self.model
            + self.decoder
            + self.added_section()
            + self.tail()
            + self.trailing
        )


# Qwen3's added tokens from id 151,643 on, with their special flags (tokenizer.json).
QWEN3_ADDED = (
    *(
        (name, True)
        for name in (
            "<|endoftext|>",
            "<|im_start|>",
            "<|im_end|>",
            "<|object_ref_start|>",
            "<|object_ref_end|>",
            "<|box_start|>",
            "<|box_end|>",
            "<|quad_start|>",
            "<|quad_end|>",
            "<|vision_start|>",
            "<|vision_end|>",
            "<|vision_pad|>",
            "<|image_pad|>",
            "<|video_pad|>",
        )
    ),
    *(
        (name, False)
        for name in (
            "<tool_call>",
            "</tool_call>",
            "<|fim_prefix|>",
            "<|fim_middle|>",
            "<|fim_suffix|>",
            "<|fim_pad|>",
            "<|repo_name|>",
            "<|file_sep|>",
            "<tool_response>",
            "</tool_response>",
            "<think>",
            "</think>",
        )
    ),
)


def qwen3_shaped() -> Mtok:
    """Qwen3's layout: 151,643 BPE tokens, 151,387 merges, then its 26 added tokens up to
    id 151,668 (`<think>` 151,667, `</think>` 151,668). Token strings are stand-ins."""
    vocab = [b"tok%d" % i for i in range(QWEN3_BPE)]
    added = [
        AddedToken(QWEN3_BPE + i, name, special) for i, (name, special) in enumerate(QWEN3_ADDED)
    ]
    return Mtok(
        bpe_model(vocab, QWEN3_MERGES),
        added,
        special_ids=[t.id for t in added if t.special],
        stop_ids=[151_645],
        normalizer=b"\x06" + norm_table([(0x212B, "Å".encode())] * 1000),
    )
