"""Where a pack keeps its token embedding, and what that says: vocabulary rows and the
embedding's quantization. Vocabulary rows are stored nowhere, so they are derived.

Every spelling MNN 3.6.1 reads (llmconfig.hpp `tie_embeddings_info()`):

- `tie_embeddings` as five numbers `[w_off, alpha_off, alpha_size, bits, block]`
  (llmexport 0.0.5, MNN's exporter 3.3-3.4), or six, the sixth non-zero when the
  scales are fp16;
- `tie_embeddings` as an object `{weight_offset, alpha_offset, alpha_size, quant_bit,
  quant_block, alpha_dtype}` (MNN's exporter 3.6; `alpha_dtype` "fp16" or "fp32",
  fp32 when absent as in MNN's C++);
- no `tie_embeddings` but `embeddings_bf16.bin`, rows of hidden_size bf16 values (MNN's
  exporter 3.1).

The quantized rows come first, so `(alpha_off - w_off) * 8 / (bits * hidden)` is the row
count whatever the scales' type. The layout's offsets point into
`embeddings_int<bits>.bin` when the exporter wrote the embedding apart, else into the
weight file. The scales (`alpha_size` bytes) hold one value per block when the rows are
quantized symmetrically, a zero point and a scale when asymmetrically: MNN tells the two
apart by that size (diskembedding.cpp), and so does `symmetric`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.infra.errors import BadValueError, TieEmbeddingsError
from app.core.pack.files import EMBEDDINGS, quantized_embeddings

log = logging.getLogger("draftdeck.pack")

QUANT_BITS = (2, 3, 4, 5, 6, 7, 8, 16)
OBJECT_KEYS = ("weight_offset", "alpha_offset", "alpha_size", "quant_bit", "quant_block")
ALPHA_DTYPES = ("fp16", "fp32")
BF16_BYTES = 2
# How the layout was spelled, for `info --json` (export_format.py reads it too).
LIST5, LIST6, OBJECT, BF16_FILE, NONE = "list of 5", "list of 6", "object", "bf16 file", "none"


@dataclass(frozen=True)
class EmbeddingLayout:
    vocab: int | None
    bits: int | None  # the embedding's quantization (None: bf16 or unknown)
    block: int | None
    alpha_fp16: bool  # the per-block scales are stored as fp16 (else fp32)
    spelling: str  # LIST5, LIST6, OBJECT, BF16_FILE or NONE
    file: str | None  # the file holding the rows
    tied: bool  # the rows are the lm_head's, inside the weight file
    weight_share: int = 0  # bytes of the weight file the tied rows and scales take
    symmetric: bool | None = None  # one scale per block; None: bf16, or sizes that do not say


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _parse(tie: Any, path: Path) -> tuple[list[int], bool, str]:
    """The five layout numbers, whether scales are fp16, and the spelling."""
    if isinstance(tie, list):
        if len(tie) not in (5, 6) or not all(_whole(v) for v in tie):
            raise TieEmbeddingsError(
                path, f"tie_embeddings must be five or six whole numbers, found {tie!r}"
            )
        return list(tie[:5]), len(tie) == 6 and tie[5] != 0, LIST6 if len(tie) == 6 else LIST5
    if isinstance(tie, Mapping):
        missing = [key for key in OBJECT_KEYS if key not in tie]
        if missing:
            raise TieEmbeddingsError(
                path, f"tie_embeddings has no {' and no '.join(missing)} (MNN needs all five)"
            )
        bad = [key for key in OBJECT_KEYS if not _whole(tie[key])]
        if bad:
            raise TieEmbeddingsError(
                path, f"tie_embeddings {bad[0]} must be a whole number, found {tie[bad[0]]!r}"
            )
        dtype = tie.get("alpha_dtype", "fp32")
        if dtype not in ALPHA_DTYPES:
            raise TieEmbeddingsError(
                path, f"tie_embeddings alpha_dtype must be fp16 or fp32, found {dtype!r}"
            )
        return [tie[key] for key in OBJECT_KEYS], dtype == "fp16", OBJECT
    raise TieEmbeddingsError(
        path, f"tie_embeddings must be a list of numbers or an object, found {tie!r}"
    )


def embedding_layout(
    folder: Path, merged: Mapping[str, Any], llm_config_path: Path, weight_path: Path, hidden: int
) -> EmbeddingLayout:
    """The layout from the merged config; raises a FileError naming the file at fault."""
    tie = merged.get("tie_embeddings")
    if tie is not None:
        return _tied(folder, tie, llm_config_path, weight_path, hidden)
    named = merged.get("embedding_file", EMBEDDINGS)
    embedding = folder / str(named)
    if embedding.is_file():
        size = embedding.stat().st_size
        if size == 0 or size % (BF16_BYTES * hidden):
            raise BadValueError(
                embedding,
                f"{size:,} bytes is not a whole number of bf16 rows of {hidden} values: "
                "the download or copy was cut off; download or copy the pack again",
            )
        return EmbeddingLayout(
            size // (BF16_BYTES * hidden), None, None, False, BF16_FILE, embedding.name, False
        )
    return EmbeddingLayout(None, None, None, False, NONE, None, False)


def _tied(
    folder: Path, tie: Any, llm_config_path: Path, weight_path: Path, hidden: int
) -> EmbeddingLayout:
    (w_off, alpha_off, alpha_size, bits, block), fp16, spelling = _parse(tie, llm_config_path)
    if bits not in QUANT_BITS or alpha_off <= w_off:
        raise TieEmbeddingsError(llm_config_path, f"tie_embeddings {tie} is not a valid layout")
    target = folder / quantized_embeddings(bits)
    if not target.is_file():
        target = weight_path
    size = target.stat().st_size
    needed = alpha_off + alpha_size
    if needed > size:
        # The layout is llm_config.json's word, but a short file is far likelier than a
        # wrong layout: name the file; the layout goes to the log only.
        log.info(
            "%s: tie_embeddings %s reaches byte %d but %s has only %d bytes",
            llm_config_path,
            tie,
            needed,
            target.name,
            size,
        )
        raise TieEmbeddingsError(
            target,
            f"{target.name} is shorter than the model needs ({needed:,} bytes needed, "
            f"{size:,} present): the download or copy was cut off; download or copy "
            "the pack again",
        )
    row_bits = (alpha_off - w_off) * 8
    if row_bits % (bits * hidden):
        raise TieEmbeddingsError(
            llm_config_path,
            f"tie_embeddings {tie} does not divide into rows of hidden_size {hidden}",
        )
    tied = target == weight_path
    share = alpha_off + alpha_size - w_off if tied else 0
    rows = row_bits // (bits * hidden)
    symmetric = _symmetric(alpha_size, rows * (hidden // block if block else 1), fp16)
    return EmbeddingLayout(rows, bits, block, fp16, spelling, target.name, tied, share, symmetric)


def _symmetric(alpha_size: int, blocks: int, fp16: bool) -> bool | None:
    """One scale per block (symmetric) or a zero point and a scale (asymmetric), as MNN
    reads `alpha_size`; None when it is neither (a block that does not divide hidden)."""
    if not blocks:
        return None
    per_block = alpha_size / ((2 if fp16 else 4) * blocks)
    return {1.0: True, 2.0: False}.get(per_block)
