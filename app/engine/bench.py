"""Run interleaved plain and speculative generations through the engine client."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.core.bench import RunPair, summarize
from app.core.metrics import DecodeStats
from app.engine.client import EngineClient

DEFAULT_PROMPT = (
    "Write a short, friendly explanation of how a bicycle gear system works, "
    "then list three tips for riding up hills."
)


@dataclass
class BenchPlan:
    target: str
    draft: str
    target_config: dict[str, Any] = field(default_factory=dict)
    draft_config: dict[str, Any] = field(default_factory=dict)
    draft_length: int | None = None
    tokens: int = 128
    runs: int = 3
    prompt: str = DEFAULT_PROMPT
    warmup: bool = True


def _generate(client: EngineClient, plan: BenchPlan, mode: str) -> tuple[DecodeStats, list[int]]:
    client.run("reset")
    # Stop tokens are ignored so that every run produces the same number of tokens.
    done = client.run(
        "generate", prompt=plan.prompt, max_tokens=plan.tokens, mode=mode, ignore_stop=True
    )
    return DecodeStats.from_json(done["stats"]), list(done["tokens"])


def run_bench(
    client: EngineClient,
    plan: BenchPlan,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    loaded = client.run(
        "load",
        target=plan.target,
        draft=plan.draft,
        target_config=plan.target_config,
        draft_config=plan.draft_config,
        draft_length=plan.draft_length,
    )
    if plan.warmup:
        _generate(client, plan, "plain")
        _generate(client, plan, "speculative")
    pairs: list[RunPair] = []
    for run in range(plan.runs):
        # Alternate which mode goes first so neither always gets the warmer caches.
        order = ("plain", "speculative") if run % 2 == 0 else ("speculative", "plain")
        results = {mode: _generate(client, plan, mode) for mode in order}
        base, base_tokens = results["plain"]
        spec, spec_tokens = results["speculative"]
        pairs.append(RunPair(base, spec, base_tokens == spec_tokens))
        if progress is not None:
            progress(run + 1, plan.runs)
    summary = summarize(pairs)
    summary["lossless_expected"] = loaded["lossless_expected"]
    summary["linear_attention"] = loaded["linear_attention"]
    summary["target"] = plan.target
    summary["draft"] = plan.draft
    return summary
