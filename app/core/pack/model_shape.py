"""How big a model is: its parameter count, the weights MNN holds, and how many values
each token adds to its KV cache, from the best source a bundle offers.

1. The graph's linear layers (mnn_graph.py): exact widths, what MNN itself runs. Every
   llmexport pack has them; llmexport 0.0.5 writes no head counts into llm_config.json.
2. llm_config.json's shape keys, when an exporter wrote them all (`num_attention_heads`,
   `num_key_value_heads`, `head_dim`, `intermediate_size`).
3. The weight file's size: each block of `block` weights takes `bits` per weight plus an
   fp32 scale and offset (llmexport's asymmetric quantization).
4. The old rule of thumb, layers x 12 x hidden^2 + embedding: about 15 % low for Qwen3,
   whose attention is wider than hidden and whose MLP has three matrices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.pack.mnn_graph import Linear

GRAPH, LLM_CONFIG, WEIGHT_SIZE, RULE_OF_THUMB = "graph", "llm_config", "weight_size", "formula"
SHAPE_KEYS = ("num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size")
SCALE_BITS_PER_BLOCK = 64  # one fp32 scale and one fp32 offset per block
# Families whose attention normalises q and k per head (one head_dim vector each).
QK_NORM_FAMILIES = frozenset({"qwen3", "qwen3_moe"})
# Without widths: MLPs three times hidden wide (Qwen3, Llama-like), full-width keys.
ASSUMED_MLP_RATIO = 3


@dataclass(frozen=True)
class ModelShape:
    params: int  # every parameter, the embedding counted once when tied
    linear_params: int  # the graph's linear layers (lm_head included): what MNN holds
    weight_bytes: int  # the .weight file: what MNN reads into memory as stored
    kv_values_per_token: int  # keys plus values one token adds, summed over layers
    kv_layers: int  # layers with a KV cache (linear-attention layers keep a fixed state)
    mlp_width: int  # the MLP's inner width (intermediate size)
    source: str  # GRAPH, LLM_CONFIG, WEIGHT_SIZE or RULE_OF_THUMB

    def to_json(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "linear_params": self.linear_params,
            "weight_bytes": self.weight_bytes,
            "kv_values_per_token": self.kv_values_per_token,
            "kv_layers": self.kv_layers,
            "mlp_width": self.mlp_width,
            "source": self.source,
        }


@dataclass(frozen=True)
class Dimensions:
    """What bundle.py already knows about a model."""

    model_type: str
    hidden: int
    layers: int
    vocab: int
    tied: bool  # the lm_head doubles as the embedding (llmexport's tie_embeddings)
    bits: int | None
    block: int | None


def model_shape(
    dims: Dimensions, llm_config: Mapping[str, Any], linears: tuple[Linear, ...], weight_path: Path
) -> ModelShape:
    """`linears`: the graph's linear layers (graph_facts.py), empty when unreadable."""
    weight_bytes = weight_path.stat().st_size
    if linears:
        return shape_from_graph(dims, linears, weight_bytes)
    if all(_positive(llm_config.get(k)) for k in SHAPE_KEYS):
        return shape_from_config(dims, llm_config, weight_bytes)
    if dims.bits:
        return shape_from_weight_size(dims, weight_bytes)
    return rule_of_thumb(dims, weight_bytes)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _norms(dims: Dimensions, head_dim: int = 0) -> int:
    """RMSNorm weights: two per layer (plus q/k norms in Qwen3) and the final one."""
    qk = 2 * head_dim if dims.model_type in QK_NORM_FAMILIES else 0
    return dims.layers * (2 * dims.hidden + qk) + dims.hidden


def _separate_embedding(dims: Dimensions) -> int:
    return 0 if dims.tied else dims.vocab * dims.hidden


def shape_from_graph(
    dims: Dimensions, linears: tuple[Linear, ...], weight_bytes: int
) -> ModelShape:
    linear = sum(layer.params for layer in linears)
    kv = sum(layer.outputs for layer in linears if _has_part(layer.name, "k_proj", "v_proj"))
    kv_layers = sum(1 for layer in linears if _has_part(layer.name, "k_proj"))
    mlp = max(
        (layer.outputs for layer in linears if _has_part(layer.name, "gate_proj", "up_proj")),
        default=ASSUMED_MLP_RATIO * dims.hidden,
    )
    return ModelShape(
        params=linear + _separate_embedding(dims) + _norms(dims),
        linear_params=linear,
        weight_bytes=weight_bytes,
        # A graph whose projections are fused or named otherwise: assume full-width
        # keys and values (an upper bound; grouped-query models need a fraction).
        kv_values_per_token=kv or 2 * dims.layers * dims.hidden,
        kv_layers=kv_layers if kv else dims.layers,
        mlp_width=mlp,
        source=GRAPH,
    )


def _has_part(name: str, *wanted: str) -> bool:
    """llmexport names linear layers like /layers.3/self_attn/k_proj/Linear."""
    return any(part in wanted for part in name.split("/"))


def shape_from_config(
    dims: Dimensions, llm_config: Mapping[str, Any], weight_bytes: int
) -> ModelShape:
    heads, kv_heads, head_dim, mlp = (int(llm_config[k]) for k in SHAPE_KEYS)
    hidden = dims.hidden
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    linear = dims.layers * (attention + 3 * hidden * mlp) + dims.vocab * hidden
    return ModelShape(
        params=linear + _separate_embedding(dims) + _norms(dims, head_dim),
        linear_params=linear,
        weight_bytes=weight_bytes,
        kv_values_per_token=dims.layers * 2 * kv_heads * head_dim,
        kv_layers=dims.layers,
        mlp_width=mlp,
        source=LLM_CONFIG,
    )


def shape_from_weight_size(dims: Dimensions, weight_bytes: int) -> ModelShape:
    bits = dims.bits or 16
    block = dims.block if dims.block and dims.block > 0 else 0
    bits_per_weight = bits + (SCALE_BITS_PER_BLOCK / block if block else 0)
    linear = int(weight_bytes * 8 / bits_per_weight)
    return _without_widths(dims, linear, weight_bytes, WEIGHT_SIZE)


def rule_of_thumb(dims: Dimensions, weight_bytes: int) -> ModelShape:
    linear = dims.layers * 12 * dims.hidden**2 + dims.vocab * dims.hidden
    return _without_widths(dims, linear, weight_bytes, RULE_OF_THUMB)


def _without_widths(dims: Dimensions, linear: int, weight_bytes: int, source: str) -> ModelShape:
    """A shape from a linear parameter count alone: full-width keys and values, an MLP
    ASSUMED_MLP_RATIO times hidden wide."""
    return ModelShape(
        params=linear + _separate_embedding(dims),
        linear_params=linear,
        weight_bytes=weight_bytes,
        kv_values_per_token=2 * dims.layers * dims.hidden,
        kv_layers=dims.layers,
        mlp_width=ASSUMED_MLP_RATIO * dims.hidden,
        source=source,
    )


def linear_bits(
    weight_bytes: int,
    linears: tuple[Linear, ...],
    embedding_bytes: int,
    block: int | None,
    fp16_scales: bool,
) -> int | None:
    """The bits per weight of the layers outside the embedding, from the weight file.

    Exporters record only the embedding's quantization (`tie_embeddings`), and MNN's
    exporter 3.3 writes that one at 8 bits when the model is 4-bit; 3.1 records none.
    Each weight takes `bits` plus its block's scale and offset (64 bits per block with
    fp32 scales, 32 with fp16): rounding after taking that off gives the bits. Without
    the block size (3.1 records none) 4 bits at block 64 and 5 per channel look alike,
    so then nothing is claimed.
    `embedding_bytes`: the embedding's share of the weight file (0 when stored apart,
    then the lm_head is an ordinary layer of the file).
    """
    layers = [lin for lin in linears if embedding_bytes == 0 or not _has_part(lin.name, "lm_head")]
    params = sum(lin.params for lin in layers)
    if not params or not block or embedding_bytes >= weight_bytes:
        return None
    per_weight = (weight_bytes - embedding_bytes) * 8 / params
    bits = round(per_weight - (32 if fp16_scales else SCALE_BITS_PER_BLOCK) / block)
    return bits if bits in (2, 3, 4, 5, 6, 7, 8, 16) else None
