"""How much memory a pair needs under its recipe, and whether this computer has it.

Per model: its weights (as stored with `memory: "low"`, which keeps them 4-bit; as fp32
with "normal" or "high", which make MNN dequantize them), its KV cache for the planned
context (every layer's keys and values, fp32, grown 64 tokens at a time), and a fixed
part per model and per layer (graph, buffers, scratch). Once per engine: MNN's runtime
(the first model loaded) and the worker itself (Python with numpy and MNN imported).

The constants were measured with MNN 3.6.1 on x86-64 Linux: worker RSS after loading and
generating, minus its RSS when ready (tests/engine/test_ram_estimate.py on the fixtures,
benchmarks/ram_estimate.py on a 16-layer hidden-512 pair and a Qwen3-0.6B-shaped pair
with a 4-layer draft and the real tokenizer). On the fixtures the fixed parts dominate;
at Qwen3-0.6B's shape the weights and the cache do (537 MB with memory low, 3.3 GB with
normal, a few tokens in). fp16 machines (ARM with precision low) may hold fp32 weights
and the cache at half the size: there this is an upper bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import psutil

from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo
from app.core.pack.model_shape import ModelShape
from app.core.recipe.files import run_recipes

MB = 1_000_000
WORKER_BYTES = 41 * MB  # the worker when ready: Python, numpy, MNN imported
MNN_RUNTIME_BYTES = 4_500_000  # the first model brings MNN's runtime up
MODEL_BYTES = 2_500_000  # each model: graph, modules, buffers
TOKENIZER_FACTOR = 6  # MNN's tokenizer in memory per byte of its file (Qwen3's: 4 MB)
LAYER_BYTES = 350_000  # each layer: execution buffers ...
LAYER_BYTES_PER_HIDDEN = 500  # ... growing with its width (0.45 MB at 256, 0.9 at 1024)
FP32 = 4
KV_CHUNK_TOKENS = 64  # MNN grows the cache this many tokens at a time
# A prompt's cache is allocated at once. Tokens added one by one grow it 64 at a time,
# each growth copying into a new buffer, and freed buffers are not all reused: measured
# 2.0-2.3x the cache's own size per decoded token at Qwen3's width (8 KV heads x 128,
# 8 KB per layer and token), 1.15-1.3x for the narrow layers of toy models (1-2 KB).
KV_GROWTH_WIDE, KV_GROWTH_NARROW = 2.0, 1.2
WIDE_LAYER_BYTES = 4096  # K and V bytes per layer and token from which growth costs 2x
# Working memory of a prompt's prefill, kept by MNN's pool afterwards: about four fp32
# values per unit of hidden plus MLP width for each prompt token (measured at 1,500
# tokens: 8.7 KB/token at 256+256, 24 KB/token at 512+1024).
PROMPT_BYTES_PER_WIDTH = 16
PLANNED_PROMPT_TOKENS = 512  # a long chat message; later turns prefill only what is new
DEQUANTIZED = ("normal", "high")  # memory modes in which MNN keeps fp32 weights
TIGHT_SHARE = 0.8  # above this share of the available memory, warn

FITS, TIGHT, TOO_BIG = "fits", "tight", "too_big"


@dataclass(frozen=True)
class ModelMemory:
    name: str
    memory: str  # the recipe's memory mode
    layers: int
    stored_weights: int  # the .weight file, as MNN keeps it with memory "low"
    fp32_weights: int  # the linear layers dequantized, with memory "normal" or "high"
    kv_cache: int
    kv_per_token: int  # what each further decoded token adds
    context_tokens: int
    prompt_work: int  # prefill working memory
    fixed: int  # per model (its tokenizer too) and per layer

    @property
    def weights(self) -> int:
        return self.fp32_weights if self.memory in DEQUANTIZED else self.stored_weights

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.prompt_work + self.fixed

    @property
    def weights_kind(self) -> str:
        return "fp32" if self.memory in DEQUANTIZED else "as stored"

    def describe(self) -> str:
        """Every part of the total, so the figures add up."""
        return (
            f"{format_bytes(self.total)}: weights {format_bytes(self.weights)} "
            f"{self.weights_kind} (memory {self.memory}), KV cache "
            f"{format_bytes(self.kv_cache)} for {self.context_tokens:,} tokens, prefill "
            f"{format_bytes(self.prompt_work)}, MNN's model and {self.layers:,}-layer "
            f"overhead {format_bytes(self.fixed)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "memory": self.memory,
            "weights": self.weights,
            "kv_cache": self.kv_cache,
            "context_tokens": self.context_tokens,
            "prompt_work": self.prompt_work,
            "fixed": self.fixed,
            "total": self.total,
        }


@dataclass(frozen=True)
class PairMemory:
    target: ModelMemory
    draft: ModelMemory | None

    @property
    def models(self) -> tuple[ModelMemory, ...]:
        return (self.target,) if self.draft is None else (self.target, self.draft)

    @property
    def engine(self) -> int:
        """What loading adds to a running worker: the models and MNN's runtime."""
        return MNN_RUNTIME_BYTES + sum(m.total for m in self.models)

    @property
    def total(self) -> int:
        """All of it, the worker included."""
        return WORKER_BYTES + self.engine

    def summary(self, needed: int) -> str:
        sides = "; ".join(
            f"{side} {m.describe()}"
            for side, m in zip(("target", "draft"), self.models, strict=False)
        )
        runtime = needed - sum(m.total for m in self.models)
        return f"about {format_bytes(needed)} ({sides}; MNN's runtime {format_bytes(runtime)})"

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target.to_json(),
            "draft": self.draft.to_json() if self.draft else None,
            "runtime": WORKER_BYTES + MNN_RUNTIME_BYTES,
            "total": self.total,
        }


@dataclass(frozen=True)
class MemoryFit:
    level: str  # FITS, TIGHT or TOO_BIG
    needed: int
    available: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "needed": self.needed,
            "available": self.available,
            "message": self.message,
        }


def memory_mode(recipe: Mapping[str, Any]) -> str:
    value = recipe.get("memory", "low")
    return value if isinstance(value, str) else "low"


def estimate_model(
    info: BundleInfo,
    recipe: Mapping[str, Any],
    tokens: int | None = None,
    prompt_tokens: int | None = None,
) -> ModelMemory:
    """One model under `recipe` with `tokens` in its cache (the recipe's context when
    None) after a prompt of `prompt_tokens` (a long chat message when None)."""
    shape = info.shape
    # The cache never holds more than the window (context_window.py), so plan for that.
    context = info.context.under(recipe).tokens if tokens is None else tokens
    prompt = min(context, PLANNED_PROMPT_TOKENS) if prompt_tokens is None else prompt_tokens
    width = info.hidden_size + shape.mlp_width
    return ModelMemory(
        name=info.name,
        memory=memory_mode(recipe),
        layers=info.layers,
        stored_weights=shape.weight_bytes,
        fp32_weights=shape.linear_params * FP32,
        kv_cache=_kv_bytes(shape, context, prompt),
        kv_per_token=int(shape.kv_values_per_token * FP32 * kv_growth(shape)),
        context_tokens=context,
        prompt_work=prompt * PROMPT_BYTES_PER_WIDTH * width,
        fixed=MODEL_BYTES
        + TOKENIZER_FACTOR * info.tokenizer.size_bytes
        + (LAYER_BYTES + LAYER_BYTES_PER_HIDDEN * info.hidden_size) * info.layers,
    )


def kv_growth(shape: ModelShape) -> float:
    """Bytes a decoded token costs per byte of cache it adds (see KV_GROWTH_WIDE)."""
    per_layer = shape.kv_values_per_token * FP32 / max(1, shape.kv_layers)
    return KV_GROWTH_WIDE if per_layer >= WIDE_LAYER_BYTES else KV_GROWTH_NARROW


def _kv_bytes(shape: ModelShape, context: int, prompt: int) -> int:
    per_token = shape.kv_values_per_token * FP32
    prefilled = min(prompt, context) + KV_CHUNK_TOKENS
    return int(per_token * (prefilled + kv_growth(shape) * max(0, context - prompt)))


def estimate_pair(
    target: BundleInfo,
    target_recipe: Mapping[str, Any],
    draft: BundleInfo | None = None,
    draft_recipe: Mapping[str, Any] | None = None,
    tokens: int | None = None,
    prompt_tokens: int | None = None,
) -> PairMemory:
    return PairMemory(
        estimate_model(target, target_recipe, tokens, prompt_tokens),
        estimate_model(draft, draft_recipe or {}, tokens, prompt_tokens)
        if draft is not None
        else None,
    )


def available_memory() -> int:
    return int(psutil.virtual_memory().available)


def assess_memory(
    target: BundleInfo,
    draft: BundleInfo | None,
    target_overrides: Mapping[str, Any] | None = None,
    draft_overrides: Mapping[str, Any] | None = None,
    worker_running: bool = True,
) -> tuple[PairMemory, MemoryFit]:
    """The pair's estimate under the recipes it runs with, and whether it fits now."""
    target_run, draft_run = run_recipes(
        target.path, draft.path if draft else None, target_overrides, draft_overrides
    )
    pair = estimate_pair(target, target_run, draft, draft_run)
    return pair, check_fit(pair, available_memory(), worker_running)


def check_fit(pair: PairMemory, available: int, worker_running: bool = True) -> MemoryFit:
    """Whether the pair fits in `available` bytes, with the numbers and what would help.

    In a running worker the worker's own memory is already spent, so only the engine
    part is needed."""
    needed = pair.engine if worker_running else pair.total
    level = FITS
    if needed > available:
        level = TOO_BIG
    elif needed > available * TIGHT_SHARE:
        level = TIGHT
    numbers = (
        f"this pair needs {pair.summary(needed)}; {format_bytes(available)} of memory is available"
    )
    if level == FITS:
        return MemoryFit(level, needed, available, f"Memory: {numbers}.")
    lead = "Not enough memory" if level == TOO_BIG else "Memory is tight"
    message = f"{lead}: {numbers}."
    help_text = _advice(pair, available, worker_running)
    return MemoryFit(level, needed, available, f"{message} {help_text}".strip())


def _advice(pair: PairMemory, available: int, worker_running: bool) -> str:
    dequantized = [m for m in pair.models if m.memory in DEQUANTIZED]
    if dequantized:
        low = PairMemory(
            replace(pair.target, memory="low"),
            replace(pair.draft, memory="low") if pair.draft is not None else None,
        )
        now = sum(m.weights for m in pair.models)
        then = sum(m.weights for m in low.models)
        needed = low.engine if worker_running else low.total
        fits = "which fits" if needed <= available * TIGHT_SHARE else "still too much"
        return (
            f'memory: "low" keeps weights as stored: {format_bytes(then)} instead of '
            f"{format_bytes(now)}; the pair then needs about {format_bytes(needed)}, {fits} "
            '(speculative output may then differ slightly from plain decoding; see "lossless").'
        )
    per_k = sum(m.kv_per_token for m in pair.models)
    return (
        f"The KV cache grows by {format_bytes(per_k * 1000)} per 1,000 tokens of "
        "conversation; a smaller target or draft needs less. Close other programs to "
        "free memory."
    )
