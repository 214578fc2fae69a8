"""Run interleaved plain and speculative generations through the engine client."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.infra.errors import EngineError, SpeculationCannotPay
from app.core.measure.bench import RunPair, combine_runs, summarize
from app.core.measure.bench_summary import BenchFacts, BenchSummary
from app.core.measure.metrics import DecodeStats
from app.core.measure.pair_cost import BY_BENCH, record_cost
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.recipe.drafting_settings import DraftingSettings
from app.core.recipe.sampler_settings import SamplerSettings
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import (
    FailureCode,
    Generate,
    Load,
    Loaded,
    MeasureAgreement,
    Mode,
    Reset,
    StopReason,
)

log = logging.getLogger("draftdeck.engine.bench")

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
    runs: int = 3  # measured pairs per prompt
    prompts: tuple[str, ...] = (DEFAULT_PROMPT,)
    warmup: bool = True
    # > 0: each run repeats its generation until it has decoded about this long.
    min_run_seconds: float = 0.0
    sampler: SamplerSettings | None = None  # None: greedy, the exact comparison
    # Pair i draws with seed + i in both modes (None: fresh seeds every generation).
    seed: int | None = None
    # Adaptive drafting or a fixed length; None: the draft pack's own setting.
    drafting: DraftingSettings | None = None


MAX_GENERATIONS_PER_RUN = 64


class BenchCancelled(Exception):
    """Stopped by a cancel: between runs, or in a generation or verify check the engine
    was told to stop (its figures are not kept); the pairs measured whole so far are kept
    by the caller (args[0])."""


def cannot_pay(loaded: Loaded, force: bool) -> str | None:
    """The load event's cannot-pay mark (None if the pair can gain); refuses unless
    `force`: an uplift measured where no exact scheme can win would read as a finding."""
    reason = loaded.cannot_pay
    if reason and not force:
        raise SpeculationCannotPay(
            f"Not measured: {reason} (linear_rollback false). This MNN cannot take "
            "rejected draft tokens out of the target's linear-attention state, so the "
            "target is verified one token at a time and every token still costs it a "
            "step: an uplift figure would mean nothing."
        )
    return reason or None


def _generate(
    client: EngineClient, plan: BenchPlan, prompt: str, mode: Mode, pair: int = 0
) -> tuple[DecodeStats, list[int]]:
    client.run(Reset())
    seed = None if plan.seed is None else plan.seed + pair
    # Stop tokens are ignored so that every run produces the same number of tokens.
    request = Generate(
        prompt=prompt,
        max_tokens=plan.tokens,
        mode=mode,
        ignore_stop=True,
        sampler=plan.sampler,
        seed=seed,
        drafting=plan.drafting,
    )
    done = client.run(request)
    if done.stopped_by == StopReason.CANCELLED:  # EngineClient.interrupt: a cut-short run
        raise BenchCancelled([])
    return done.stats, list(done.tokens)


def load_pair(client: EngineClient, plan: BenchPlan) -> Loaded:
    """Load the plan's pair; one the engine would refuse (blocked, a draft length out of
    range, too little memory) raises its EngineError before a worker is asked."""
    loaded = client.load(
        Load(
            target=plan.target,
            draft=plan.draft,
            target_config=plan.target_config,
            draft_config=plan.draft_config,
            draft_length=plan.draft_length,
        )
    )
    if loaded.memory_warning:  # a pair that does not fit is refused by the engine
        log.warning("%s", loaded.memory_warning)
    return loaded


def measure_agreement(client: EngineClient) -> VerifyAgreement:
    """The loaded pair's verify agreement (cached per target and recipe); BenchCancelled
    when the engine was told to stop while checking it."""
    try:
        return client.run(MeasureAgreement()).result
    except EngineError as exc:
        if exc.code == FailureCode.CANCELLED:
            raise BenchCancelled([]) from None
        raise


def warm_up(client: EngineClient, plan: BenchPlan) -> int:
    """One unmeasured run of each mode on the loaded configuration; returns how many
    generations make one run last `plan.min_run_seconds` (1 when that is 0)."""
    seconds = [
        _generate(client, plan, plan.prompts[0], mode)[0].decode_seconds
        for mode in (Mode.PLAIN, Mode.SPECULATIVE)
    ]
    if plan.min_run_seconds <= 0:
        return 1
    shortest = max(min(seconds), 1e-6)
    return max(1, min(MAX_GENERATIONS_PER_RUN, math.ceil(plan.min_run_seconds / shortest)))


def _run(
    client: EngineClient, plan: BenchPlan, prompt: str, mode: Mode, generations: int, pair: int
) -> tuple[DecodeStats, list[list[int]]]:
    runs = [_generate(client, plan, prompt, mode, pair) for _ in range(generations)]
    return combine_runs([stats for stats, _ in runs]), [ids for _, ids in runs]


def run_pairs(
    client: EngineClient,
    plan: BenchPlan,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[int, int], None] | None = None,
    generations: int | None = None,
) -> list[RunPair]:
    """Interleaved plain/speculative pairs over every prompt (the pair must be loaded).
    Each run is `generations` back-to-back generations (from the warm-up when None)."""
    if plan.warmup:
        wanted = warm_up(client, plan)
        generations = generations or wanted
    generations = generations or 1
    pairs: list[RunPair] = []
    total = plan.runs * len(plan.prompts)
    for _ in range(plan.runs):
        for prompt in plan.prompts:
            if cancelled():
                raise BenchCancelled(pairs)
            # Alternate which mode goes first so neither always gets the warmer caches.
            first = len(pairs) % 2 == 0
            order = (Mode.PLAIN, Mode.SPECULATIVE) if first else (Mode.SPECULATIVE, Mode.PLAIN)
            try:
                results = {
                    mode: _run(client, plan, prompt, mode, generations, len(pairs))
                    for mode in order
                }
            except BenchCancelled:  # the pair under way is not whole: the others are kept
                raise BenchCancelled(pairs) from None
            base, base_tokens = results[Mode.PLAIN]
            spec, spec_tokens = results[Mode.SPECULATIVE]
            pairs.append(RunPair(base, spec, base_tokens == spec_tokens))
            if progress is not None:
                progress(len(pairs), total)
    return pairs


def run_bench(
    client: EngineClient,
    plan: BenchPlan,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> BenchSummary:
    loaded = load_pair(client, plan)
    reason = cannot_pay(loaded, force)
    figures = summarize(run_pairs(client, plan, progress=progress))
    # The Pair page and `check` say this measured c in place of their estimate.
    record_cost(Path(plan.target), Path(plan.draft), figures, BY_BENCH)
    facts = BenchFacts(
        cannot_pay=reason,
        linear_rollback=loaded.linear_rollback,
        lossless_expected=loaded.lossless_expected,
        linear_attention=loaded.linear_attention,
        target=plan.target,
        draft=plan.draft,
        seed=plan.seed,
    )
    return BenchSummary(figures, measure_agreement(client), facts)
