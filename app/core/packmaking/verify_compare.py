"""Per-position comparison of a pack's teacher-forced logits with its source model's.

Row i of each array holds the logits after token i of a text (what comes next). Against
the source quantized like the export, a faithful export agrees on the top-1 token at
almost every position ("export faithful"); against the source as it is, the difference
is what the quantization costs ("quantization cost"). Plain numpy: no torch, no MNN.

Top-1 agreement alone misses a fault that keeps the ranking: a tied random model echoes
its input whatever its weights hold, so a tampered weight file can still agree
everywhere. At `memory: normal` MNN computes with the stored weights in fp32, so its
logits must also match the quantized source's closely: the largest difference may be at
most LOGIT_TOLERANCE of the largest logit (verify_result.py).

Ties: at a position where the reference's best two logits are closer than TIE_GAP, the
top-1 is a coin toss for any two computations that round differently (MNN sums in
another order than torch); such positions are counted apart and left out of the
agreement, and how many there were is reported. Random-weight models have many.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Rows = npt.NDArray[np.float32]
Decode = Callable[[Sequence[int]], str]

# Measured on good exports at memory normal, the largest |MNN - quantized source| logit:
# 4.8e-7 (tiny Llama), 5.8e-6 (tiny Qwen3, real tokenizer), 2.1e-3 (hidden 128 Qwen3); at
# memory low up to 8e-3. A gap below TIE_GAP can flip for rounding alone.
TIE_GAP = 1e-2
HUGE = 1e30  # a logit beyond this is a fault (MNN's FLT_MAX rows of the block-size bug)
CONTEXT_TOKENS = 8  # tokens of the text shown before a divergence


@dataclass(frozen=True)
class Divergence:
    """The first position where the pack's top-1 token is not the reference's."""

    position: int  # the token index the prediction follows (0-based)
    context: str  # the text's last CONTEXT_TOKENS tokens up to and with that token
    expected: str  # what the source (quantized like the export) predicts
    got: str  # what the pack predicts
    expected_id: int
    got_id: int


@dataclass(frozen=True)
class TextAgreement:
    name: str
    positions: int
    ties: int  # positions left out: the quantized source's top two within TIE_GAP
    faithful: float  # top-1 agreement with the quantized source (the criterion)
    cost: float  # top-1 agreement with the source as it is
    max_abs_diff: float  # the largest |pack - quantized source| logit (inf: non-finite)
    scale: float  # the largest |logit| of the quantized source (what the difference is of)
    non_finite: int  # positions whose pack logits are not finite (or beyond HUGE)
    divergence: Divergence | None


def top1(rows: Rows) -> npt.NDArray[np.int64]:
    found: npt.NDArray[np.int64] = np.argmax(rows, axis=-1)
    return found


def tie_mask(rows: Rows, gap: float = TIE_GAP) -> npt.NDArray[np.bool_]:
    """Positions whose best two logits are within `gap` of each other."""
    if rows.shape[-1] < 2:
        return np.zeros(rows.shape[0], dtype=bool)
    best2 = np.partition(rows, -2, axis=-1)[:, -2:]
    tied: npt.NDArray[np.bool_] = (best2[:, 1] - best2[:, 0]) < gap
    return tied


def _share(matches: npt.NDArray[np.bool_], counted: npt.NDArray[np.bool_]) -> float:
    n = int(counted.sum())
    return float(matches[counted].sum()) / n if n else 1.0


def compare_text(
    name: str,
    ids: Sequence[int],
    source: Rows,
    quantized: Rows,
    pack: Rows,
    decode: Decode,
) -> TextAgreement:
    """One text's figures; `decode` turns token ids into text (the pack's tokenizer)."""
    width = min(source.shape[-1], quantized.shape[-1], pack.shape[-1])
    source, quantized, pack = source[:, :width], quantized[:, :width], pack[:, :width]
    bad = ~np.isfinite(pack).all(axis=-1) | (np.abs(np.nan_to_num(pack)) > HUGE).any(axis=-1)
    ties = tie_mask(quantized)
    counted = ~ties
    reference, got = top1(quantized), top1(pack)
    faithful = reference == got
    faithful[bad] = False  # garbage never agrees, whatever argmax picks from it
    cost = (top1(source) == got) & ~bad
    diff = np.abs(pack.astype(np.float64) - quantized)
    max_diff = float("inf") if bad.any() else float(diff.max()) if diff.size else 0.0
    wrong = np.flatnonzero(counted & ~faithful)
    divergence = None
    if wrong.size:
        i = int(wrong[0])
        divergence = Divergence(
            i,
            decode(list(ids[max(0, i + 1 - CONTEXT_TOKENS) : i + 1])),
            decode([int(reference[i])]),
            decode([int(got[i])]),
            int(reference[i]),
            int(got[i]),
        )
    return TextAgreement(
        name,
        len(ids),
        int(ties.sum()),
        _share(faithful, counted),
        _share(cost, counted),
        max_diff,
        float(np.abs(quantized).max()) if quantized.size else 0.0,
        int(bad.sum()),
        divergence,
    )
