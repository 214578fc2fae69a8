"""Parameter counts and KV widths: from the graph, llm_config.json or the weight size."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.pack.bundle import read_bundle
from app.core.pack.graph_facts import read_graph_facts
from app.core.pack.model_shape import (
    GRAPH,
    LLM_CONFIG,
    WEIGHT_SIZE,
    Dimensions,
    shape_from_config,
    shape_from_weight_size,
)
from tests.helpers.mnn_graphs import graph_bytes, transformer_ops

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]


def qwen3_params(
    hidden: int, layers: int, heads: int, kv_heads: int, head_dim: int, mlp: int, vocab: int
) -> int:
    """A tied Qwen3 counted weight by weight, as transformers builds it."""
    q = hidden * heads * head_dim
    k = v = hidden * kv_heads * head_dim
    o = heads * head_dim * hidden
    gate = up = down = hidden * mlp
    norms = hidden + hidden + head_dim + head_dim  # input, post-attention, q_norm, k_norm
    per_layer = q + k + v + o + gate + up + down + norms
    return layers * per_layer + hidden + vocab * hidden  # final norm, tied embedding


# Qwen3-0.6B's config.json: hidden 1024, 28 layers, 16 heads, 8 KV heads, head_dim 128,
# intermediate 3072, vocabulary 151,936, tied embeddings.
QWEN3_06B = dict(hidden=1024, layers=28, heads=16, kv_heads=8, head_dim=128, mlp=3072)
QWEN3_06B_KEYS = {
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 3072,
}
VOCAB = 151_936


def test_qwen3_06b_by_hand() -> None:
    # 28 x (2,097,152 + 1,048,576 + 1,048,576 + 2,097,152 + 3 x 3,145,728 + 2,304)
    # + 1,024 + 155,582,464
    assert qwen3_params(**QWEN3_06B, vocab=VOCAB) == 596_049_920


def test_shape_keys_in_llm_config_give_the_exact_count() -> None:
    dims = Dimensions("qwen3", 1024, 28, VOCAB, True, 4, 128)
    shape = shape_from_config(dims, QWEN3_06B_KEYS, 0)
    assert shape.params == 596_049_920
    assert shape.source == LLM_CONFIG
    assert shape.kv_values_per_token == 28 * 2 * 8 * 128
    assert shape.mlp_width == 3072


def test_qwen3_8b_is_a_target() -> None:
    dims = Dimensions("qwen3", 4096, 36, VOCAB, False, 4, 128)
    keys = {**QWEN3_06B_KEYS, "num_attention_heads": 32, "intermediate_size": 12288}
    shape = shape_from_config(dims, keys, 0)
    untied = qwen3_params(4096, 36, 32, 8, 128, 12288, VOCAB) + VOCAB * 4096
    assert shape.params == untied
    assert 8.1e9 < shape.params < 8.3e9  # "Qwen3-8B: 8.2B parameters"


def _stored_bytes(params: int, bits: int = 4, block: int = 128) -> int:
    """llmexport's asymmetric block quantization: bits per weight plus two fp32 per block."""
    return params * bits // 8 + params // block * 8


def test_weight_size_estimate_at_qwen3_06b_scale() -> None:
    dims = Dimensions("qwen3", 1024, 28, VOCAB, True, 4, 128)
    exact = qwen3_params(**QWEN3_06B, vocab=VOCAB)
    norms = 28 * (2 * 1024 + 2 * 128) + 1024
    weight_bytes = _stored_bytes(exact - norms) + 4 * norms  # norms stay fp32
    shape = shape_from_weight_size(dims, weight_bytes)
    assert shape.source == WEIGHT_SIZE
    assert shape.params == pytest.approx(exact, rel=0.01)
    # The old rule, layers x 12 x hidden^2 + embedding, is about 15 % low here.
    old = 28 * 12 * 1024 * 1024 + VOCAB * 1024
    assert old / exact == pytest.approx(0.85, abs=0.01)


# Ground truth: the shapes tests/fixtures/make_bundles.py builds.
FIXTURE_SHAPES = {
    "qwen3-target": dict(hidden=128, layers=2, heads=4, kv_heads=2, head_dim=32, mlp=256),
    "fast-target": dict(hidden=256, layers=12, heads=4, kv_heads=2, head_dim=64, mlp=256),
    "fast-draft": dict(hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64, mlp=256),
}


@pytest.mark.parametrize("name", sorted(FIXTURE_SHAPES))
def test_fixture_graphs_give_exact_widths(name: str, fixture_bundle: Fixture) -> None:
    want = FIXTURE_SHAPES[name]
    info = read_bundle(fixture_bundle(name))
    shape = info.shape
    assert shape.source == GRAPH
    exact = qwen3_params(**want, vocab=1280)
    qk_norms = want["layers"] * 2 * want["head_dim"]  # not in the graph as linear layers
    assert info.params_estimate == exact - qk_norms
    assert shape.kv_values_per_token == want["layers"] * 2 * want["kv_heads"] * want["head_dim"]
    assert shape.mlp_width == want["mlp"]
    assert shape.weight_bytes == (fixture_bundle(name) / "llm.mnn.weight").stat().st_size
    layers = read_graph_facts(fixture_bundle(name) / "llm.mnn").linears
    assert len(layers) == 7 * want["layers"] + 1  # q k v o gate up down, and lm_head


def test_linear_attention_layers_have_no_kv(fixture_bundle: Fixture) -> None:
    """Qwen3.5: three linear-attention layers and one full-attention layer with a cache."""
    shape = read_bundle(fixture_bundle("qwen35-draft")).shape
    assert shape.kv_values_per_token == 1 * 2 * 2 * 32


def test_fixture_roles_and_size_ratio_hold(fixture_bundle: Fixture) -> None:
    target = read_bundle(fixture_bundle("fast-target"))
    draft = read_bundle(fixture_bundle("fast-draft"))
    assert draft.params_estimate / target.params_estimate == pytest.approx(0.22, abs=0.01)
    assert target.role == "either" and draft.role == "draft"


def _big_bundle(bundle_copy: Copy, shape_keys: dict[str, int] | None) -> Path:
    """A Qwen3-0.6B-shaped bundle: sparse 4-bit weights, a graph without linear layers
    (its projections fused or named otherwise)."""
    folder = bundle_copy("qwen3-target")
    exact = qwen3_params(**QWEN3_06B, vocab=VOCAB)
    norms = 28 * (2 * 1024 + 2 * 128) + 1024
    size = _stored_bytes(exact - norms) + 4 * norms
    lm_head, scales = VOCAB * 1024 // 2, VOCAB * 1024 // 128 * 8
    w_off = size - lm_head - scales
    config_path = folder / "llm_config.json"
    config = json.loads(config_path.read_text())
    config.update(hidden_size=1024, layer_nums=28)
    config["tie_embeddings"] = [w_off, w_off + lm_head, scales, 4, 128]
    config.update(shape_keys or {})
    config_path.write_text(json.dumps(config))
    with (folder / "llm.mnn.weight").open("r+b") as weights:
        os.truncate(weights.fileno(), size)
    (folder / "llm.mnn").write_bytes(graph_bytes(transformer_ops(28)))
    return folder


def test_a_graph_without_linear_layers_falls_back_to_llm_config(bundle_copy: Copy) -> None:
    folder = _big_bundle(bundle_copy, QWEN3_06B_KEYS)
    assert read_graph_facts(folder / "llm.mnn").linears == ()
    info = read_bundle(folder)
    assert info.vocab_size == VOCAB
    assert info.shape.source == LLM_CONFIG
    assert info.params_estimate == 596_049_920
    assert info.role == "either"  # under a billion: could draft or be drafted for
    assert info.to_json()["shape"]["params"] == 596_049_920


def test_then_to_the_weight_size(bundle_copy: Copy) -> None:
    info = read_bundle(_big_bundle(bundle_copy, None))
    assert info.shape.source == WEIGHT_SIZE
    assert info.params_estimate == pytest.approx(596_049_920, rel=0.01)
