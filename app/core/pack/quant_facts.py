"""What a pack's files say of its quantization beyond the bits and block of its
embedding: the linear layers' bits, the lm_head's (llmexport's `--lm_quant_bit` sets it
apart), and whether the blocks are symmetric (`--sym`: one scale per block, no zero
point). Only what the files say for sure: the graph's own quantization parameters for
each layer (mnn_graph.py) and the embedding's scales (embedding_layout.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from app.core.pack.mnn_graph import Linear

T = TypeVar("T")
LM_HEAD = "lm_head"  # llmexport's test for the lm_head (`'lm_head' in name`)


@dataclass(frozen=True)
class QuantFacts:
    layer_bits: int | None  # every linear layer but the lm_head, when they agree
    lm_bits: int | None  # the lm_head's, from the graph
    symmetric: bool | None  # None: the files do not say, or say both


def _one(values: set[T]) -> T | None:
    """The value when all agree, else None."""
    return next(iter(values)) if len(values) == 1 else None


def quant_facts(linears: tuple[Linear, ...], embedding_symmetric: bool | None) -> QuantFacts:
    """From the graph's linear layers (empty when it could not be read) and what the
    embedding's scales say (None: bf16, or not told)."""
    told = {lin.symmetric for lin in linears if lin.symmetric is not None}
    if embedding_symmetric is not None:
        told.add(embedding_symmetric)
    return QuantFacts(
        layer_bits=_one({lin.bits for lin in linears if LM_HEAD not in lin.name and lin.bits}),
        lm_bits=_one({lin.bits for lin in linears if LM_HEAD in lin.name and lin.bits}),
        symmetric=_one(told),
    )
