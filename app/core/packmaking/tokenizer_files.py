"""A cheap check of an HF model folder's tokenizer files before an export: each one the
folder has must be what its name says, so a wrong one is named here instead of ending
the export in the exporter's traceback.

Some conversions leave a GGUF file named `tokenizer.model`; the exporter then fails deep
inside transformers ("'bool' object has no attribute 'eos_token_id'"). A SentencePiece
model is a protobuf ModelProto whose first field is normally its pieces (field 1, each a
message whose own field 1 is the piece's text); only its first bytes are read.
"""

from __future__ import annotations

from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object

SENTENCEPIECE = "tokenizer.model"
TOKENIZER_JSON = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
HEAD_BYTES = 4096  # enough for the first piece; the file can be megabytes
GGUF_MAGIC = b"GGUF"
# ModelProto's fields (pieces, trainer_spec, normalizer_spec, self_test_data,
# denormalizer_spec) are all messages: wire type 2, tags 0x0A, 0x12, 0x1A, 0x22, 0x2A.
MODEL_PROTO_TAGS = frozenset((1 << 3 | 2, 2 << 3 | 2, 3 << 3 | 2, 4 << 3 | 2, 5 << 3 | 2))
PIECE_TAG = 1 << 3 | 2  # SentencePiece.piece and ModelProto.pieces share it


class TokenizerFileProblem(FileError):
    """A tokenizer file that is not what its name says."""

    code = "bad_tokenizer"


def check_tokenizer_files(folder: Path) -> None:
    """Raise TokenizerFileProblem naming the first tokenizer file of `folder` that is
    not what its name says; files the folder lacks are not checked here."""
    model = folder / SENTENCEPIECE
    if model.is_file():
        problem = sentencepiece_problem(_head(model))
        if problem:
            raise TokenizerFileProblem(model, problem)
    for name, needs_model in ((TOKENIZER_JSON, True), (TOKENIZER_CONFIG, False)):
        path = folder / name
        if path.is_file():
            _check_json(path, needs_model)


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(HEAD_BYTES)
    except OSError as exc:
        raise TokenizerFileProblem(path, f"cannot be read ({exc.strerror or exc})") from None


def sentencepiece_problem(head: bytes) -> str:
    """What is wrong with a file whose first bytes are `head`, as a SentencePiece model
    ("" when they look like one)."""
    if not head:
        return "is empty, not a SentencePiece model"
    if head.startswith(GGUF_MAGIC):
        return (
            "is a GGUF file (it starts with GGUF), not a SentencePiece model; "
            "put the model's own tokenizer.model there or remove it"
        )
    not_sp = "is not a SentencePiece model (a protobuf ModelProto)"
    if head[0] not in MODEL_PROTO_TAGS:
        return f"{not_sp}: it starts with byte 0x{head[0]:02x}"
    if head[0] != PIECE_TAG:
        return ""  # a field other than the pieces first: unusual, left to the exporter
    start, size = _varint(head, 1)
    if start < 0 or start >= len(head):
        return f"{not_sp}: its first field is cut short"
    if len(head) < HEAD_BYTES and start + size > len(head):  # the whole file was read
        return f"{not_sp}: its first field runs past the end of the file"
    if head[start] != PIECE_TAG:
        return f"{not_sp}: its first piece has no text"
    text_at, text_size = _varint(head, start + 1)
    if text_at < 0:
        return f"{not_sp}: its first piece is cut short"
    text = head[text_at : text_at + text_size]
    if text_at + text_size <= len(head):  # a piece longer than the head is not judged
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            return f"{not_sp}: its first piece is not UTF-8 text"
    return ""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A protobuf varint at `at`: (the offset after it, its value); (-1, 0) when cut."""
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return at, value
        shift += 7
    return -1, 0


def _check_json(path: Path, needs_model: bool) -> None:
    try:
        data = read_json_object(path)
    except FileError as exc:
        raise TokenizerFileProblem(path, exc.problem) from None
    if needs_model and not isinstance(data.get("model"), dict):
        raise TokenizerFileProblem(
            path, 'has no "model" object: not a tokenizers file (tokenizer.json)'
        )
