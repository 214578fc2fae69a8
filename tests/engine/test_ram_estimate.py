"""The RAM estimate against the engine worker's measured memory, and the load check.

The fixtures are small (weights from 0.26 to 2.9 MB), so their fixed parts (MNN's
runtime, about 2.5 MB per model and 0.45 MB per layer) are most of what they need:
this checks those measured constants as much as the weight and cache terms.
benchmarks/ram_estimate.py checks a 16-layer hidden-512 pair (and the Qwen3-0.6B-shaped
pair when it has been built), where the weights dominate.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.errors import EngineError
from app.core.infra.units import format_bytes
from app.core.measure import ram_estimate
from app.core.measure.ram_estimate import FITS, TIGHT, TOO_BIG, check_fit, estimate_pair
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.model_shape import Dimensions, shape_from_config
from app.engine.worker.session import Session
from tests.helpers.worker_rss import measure_pair

Fixture = Callable[[str], Path]
PROMPT_TOKENS, NEW_TOKENS = 24, 32
TOLERANCE = 0.25


# The fixed costs were measured on x86-64 Linux; other systems' allocators differ.
@pytest.mark.skipif(sys.platform != "linux", reason="RSS constants measured on Linux")
@pytest.mark.parametrize("memory", ["low", "normal"])
@pytest.mark.parametrize(
    ("target", "draft"),
    [
        ("qwen3-target", "qwen3-draft-identical"),
        ("fast-target", "fast-draft"),
        # The real Qwen3 tokenizer (vocabulary 151,936) as both target and draft.
        ("qwen3-realtok", "qwen3-realtok"),
    ],
)
def test_estimate_matches_the_worker_rss(
    target: str, draft: str, memory: str, fixture_bundle: Fixture
) -> None:
    """Worker RSS after loading and generating, minus its RSS when ready (Python and
    MNN imported): memory, so it does not depend on how fast the machine is."""
    recipe = {"memory": memory, "thread_num": 1}
    ids = [(i * 37) % 1200 for i in range(PROMPT_TOKENS)]
    found = measure_pair(fixture_bundle(target), fixture_bundle(draft), recipe, ids, NEW_TOKENS)
    loaded, measured, estimate = found.loaded, found.measured, found.estimate
    assert loaded.memory["level"] == FITS and loaded.memory_warning is None
    assert estimate.target.memory == memory
    assert estimate.engine == pytest.approx(measured, rel=TOLERANCE), (
        f"estimate {format_bytes(estimate.engine)}, measured {format_bytes(measured)}"
    )


def _shaped(info: BundleInfo, layers: int, name: str) -> BundleInfo:
    """A fixture's description with Qwen3-0.6B's widths and `layers` layers."""
    dims = Dimensions("qwen3", 1024, layers, 151_936, True, 4, 128)
    keys = {
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 3072,
    }
    shape = shape_from_config(dims, keys, 0)
    shape = dataclasses.replace(shape, weight_bytes=shape.linear_params * 9 // 16)  # 4.5 bits
    return dataclasses.replace(
        info, name=name, hidden_size=1024, layers=layers, vocab_size=151_936, shape=shape
    )


def test_qwen3_06b_pair_at_real_scale(fixture_bundle: Fixture) -> None:
    """DESIGN.md: a Qwen3-0.6B-shaped pair measured 522 MB with memory low and 3.3 GB
    with memory normal (MNN keeps fp32 weights)."""
    base = read_bundle(fixture_bundle("qwen3-target"))
    target, draft = _shaped(base, 28, "target"), _shaped(base, 4, "draft")
    short = {"tokens": 100, "prompt_tokens": 30}
    low = estimate_pair(target, {"memory": "low"}, draft, {"memory": "low"}, **short)
    normal = estimate_pair(target, {"memory": "normal"}, draft, {"memory": "normal"}, **short)
    assert low.total == pytest.approx(522e6, rel=TOLERANCE)
    assert normal.total == pytest.approx(3.3e9, rel=TOLERANCE)
    assert normal.target.weights == target.shape.linear_params * 4


def test_refusal_names_the_numbers_and_the_recipe_that_fits(fixture_bundle: Fixture) -> None:
    base = read_bundle(fixture_bundle("qwen3-target"))
    target, draft = _shaped(base, 28, "target"), _shaped(base, 4, "draft")
    pair = estimate_pair(target, {"memory": "normal"}, draft, {"memory": "normal"})
    fit = check_fit(pair, 2_000_000_000)
    assert fit.level == TOO_BIG
    assert fit.message.startswith("Not enough memory: this pair needs about ")
    assert f"{format_bytes(2_000_000_000)} of memory is available" in fit.message
    low = pair.target.stored_weights + (pair.draft.stored_weights if pair.draft else 0)
    fp32 = pair.target.fp32_weights + (pair.draft.fp32_weights if pair.draft else 0)
    assert (
        f'memory: "low" keeps weights as stored: {format_bytes(low)} instead of '
        f"{format_bytes(fp32)}; the pair then needs about "
    ) in fit.message
    assert ", which fits" in fit.message
    assert "KV cache" in fit.message and "2,048 tokens" in fit.message

    assert check_fit(pair, int(pair.engine / 0.9)).level == TIGHT
    assert check_fit(pair, pair.engine * 2).level == FITS
    # Already 4-bit: the advice is about the cache and the models' size.
    low_pair = estimate_pair(target, {"memory": "low"}, draft, {"memory": "low"})
    advice = check_fit(low_pair, 10_000_000).message
    assert "per 1,000 tokens" in advice and 'memory: "low"' not in advice


def test_the_engine_refuses_a_pair_that_cannot_fit(
    session: Session, fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ram_estimate, "available_memory", lambda: 5_000_000)
    with pytest.raises(EngineError) as caught:
        session.load(
            str(fixture_bundle("fast-target")),
            str(fixture_bundle("fast-draft")),
            {"memory": "normal"},
            {"memory": "normal"},
        )
    assert caught.value.code == "not_enough_memory"
    message = caught.value.message
    assert "needs about" in message and "4.8 MB of memory is available" in message
    assert 'memory: "low" keeps weights as stored' in message
    assert session.target is None  # nothing was loaded


def test_a_tight_pair_loads_with_a_warning(
    session: Session, fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical")
    recipe = {"memory": "normal", "thread_num": 1}
    pair, _ = ram_estimate.assess_memory(read_bundle(target), read_bundle(draft), recipe, recipe)
    monkeypatch.setattr(ram_estimate, "available_memory", lambda: int(pair.engine / 0.9))
    loaded = session.load(str(target), str(draft), recipe, recipe)
    assert loaded.memory["level"] == TIGHT
    assert loaded.memory["estimate"]["total"] == pair.total
    assert loaded.memory_warning is not None
    assert loaded.memory_warning.startswith("Memory is tight: this pair needs about")
