"""The engine worker's memory for a pair, beside the RAM estimate for the same tokens.

Shared by tests/engine/test_ram_estimate.py (the fixtures) and benchmarks/ram_estimate.py
(larger pairs): memory, so the figure does not depend on how fast the machine is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from app.core.measure.ram_estimate import PairMemory, estimate_pair
from app.core.pack.bundle import read_bundle
from app.core.recipe.files import run_recipes
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Generate, Load, Loaded, Mode


@dataclass(frozen=True)
class PairRss:
    loaded: Loaded  # the engine's answer to the load
    tokens: int  # in the cache after generating: the prompt's and the generated ones
    ready: int  # the worker's RSS when ready (Python, numpy and MNN imported)
    measured: int  # its RSS after loading and generating, minus `ready`
    estimate: PairMemory  # for the same recipe, tokens and prompt


def measure_pair(
    target: Path, draft: Path, recipe: dict[str, Any], prompt_ids: Sequence[int], new_tokens: int
) -> PairRss:
    """Load the pair in a fresh worker with `recipe` for both models, generate
    `new_tokens` speculatively (stop tokens ignored) after `prompt_ids`, and read the
    worker's RSS by psutil."""
    with EngineClient() as client:
        client.start()
        assert client.pid is not None
        worker = psutil.Process(client.pid)
        ready = worker.memory_info().rss
        loaded = client.run(
            Load(target=str(target), draft=str(draft), target_config=recipe, draft_config=recipe)
        )
        done = client.run(
            Generate(
                prompt_ids=tuple(prompt_ids),
                max_tokens=new_tokens,
                ignore_stop=True,
                mode=Mode.SPECULATIVE,
            )
        )
        measured = worker.memory_info().rss - ready
    prompt = len(prompt_ids)
    tokens = prompt + len(done.tokens)
    target_run, draft_run = run_recipes(target, draft, recipe, recipe)
    estimate = estimate_pair(
        read_bundle(target), target_run, read_bundle(draft), draft_run, tokens, prompt
    )
    return PairRss(loaded, tokens, ready, measured, estimate)
