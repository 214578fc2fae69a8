"""Measure a draft against each chosen target through the engine: a bench with the
pair's recipes as they are, or a Quick tune (draft length 1-4) whose best setting is
taken. A pair that cannot work (the compatibility rules block it) or cannot gain on
this MNN (linear attention) is not measured: it is recorded as disabled, with why.
A caller may stop it (`cancelled`): a bench or a Quick tune stops after its current run
pair, and MeasureCancelled says that nothing measured is to be written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.infra.errors import SpeculationCannotPay
from app.core.measure.intervals import MIN_VALUES_FOR_LEVEL
from app.core.measure.load_plan import Refusal, plan_paths
from app.core.measure.tune_plan import Setting, plan_for, recipe_defaults
from app.core.measure.tune_results import SettingResult
from app.core.measure.words import FailureCode
from app.core.pack.bundle import read_bundle
from app.core.packmaking.measured import (
    BENCH,
    QUICK_TUNE,
    TargetMeasurement,
    target_key,
    target_label,
)
from app.core.recipe.drafting_settings import FIXED_DRAFTING
from app.core.recipe.files import run_recipes
from app.engine.client.bench import BenchPlan, run_bench
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_runner import run_sweep

log = logging.getLogger("draftdeck.engine.pack_measure")


@dataclass(frozen=True)
class MeasureOptions:
    quick: bool = False  # Quick tune instead of one bench of the recipes as they are
    tokens: int = 128
    runs: int = MIN_VALUES_FOR_LEVEL  # bench: measured run pairs (6: a 95 % interval)
    min_run_seconds: float = 1.0
    budget_seconds: float | None = None  # Quick tune: a setting's time budget


Progress = Callable[[str, int, int], None]  # target name, pairs done, pairs planned
Cancelled = Callable[[], bool]


class MeasureCancelled(Exception):
    """The measuring was stopped: nothing it measured is to be written."""


def _never() -> bool:
    return False


def _bench(
    client: EngineClient,
    target: Path,
    draft: Path,
    options: MeasureOptions,
    progress: Progress,
    cancelled: Cancelled,
) -> list[SettingResult]:
    # Measured as TokForge runs it (FIXED_DRAFTING), whatever the pack's own drafting.
    current = replace(Setting(**recipe_defaults(target, draft)), adaptive=False)
    plan = BenchPlan(
        str(target),
        str(draft),
        draft_length=current.draft_length,
        tokens=options.tokens,
        runs=options.runs,
        min_run_seconds=options.min_run_seconds,
        drafting=FIXED_DRAFTING,  # what TokForge runs with the figures written
    )

    def on_pair(done: int, total: int) -> None:
        progress(target.name, done, total)
        if cancelled():
            raise MeasureCancelled(f"the bench against {target.name} was stopped")

    summary = run_bench(client, plan, on_pair)
    return [SettingResult(current, summary.to_json())]


def _quick_tune(
    client: EngineClient,
    target: Path,
    draft: Path,
    options: MeasureOptions,
    progress: Progress,
    cancelled: Cancelled,
) -> list[SettingResult]:
    plan = replace(
        plan_for("quick", recipe_defaults(target, draft)),
        adaptive=False,  # the written figures are for TokForge, which drafts fixed lengths
        tokens=options.tokens,
        min_run_seconds=options.min_run_seconds,
    )
    if options.budget_seconds is not None:
        plan = replace(plan, budget_seconds=options.budget_seconds)
    run = run_sweep(
        client,
        target,
        draft,
        plan,
        cancelled,
        on_progress=lambda told: progress(target.name, told.done, told.total),
    )
    if run.cancelled:
        raise MeasureCancelled(f"the Quick tune against {target.name} was stopped")
    return run.results


def measure_target(
    client: EngineClient,
    draft: Path,
    target: Path,
    options: MeasureOptions,
    progress: Progress,
    cancelled: Cancelled = _never,
) -> TargetMeasurement:
    target_info = read_bundle(target)
    target_run, draft_run = run_recipes(target, draft)
    measurement = TargetMeasurement(
        key=target_key(target_info),
        name=target_label(target_info),
        path=str(target),
        method=QUICK_TUNE if options.quick else BENCH,
        target_backend=str(target_run.get("backend_type", "cpu")),
        draft_recipe=draft_run,
    )
    # A pair that cannot work together is recorded as such (a fact of the two packs,
    # for everyone who reads runtime_config.json). A refusal of this computer's (too
    # little memory) or of a recipe is no fact of the pack: the load says it.
    plan = plan_paths(target, draft)
    if isinstance(plan, Refusal) and plan.code == FailureCode.BLOCKED_PAIR:
        measurement.refused = plan.message
        log.info("not measured against %s: %s", target, measurement.refused)
        return measurement
    measure = _quick_tune if options.quick else _bench
    try:
        measurement.results = measure(client, target, draft, options, progress, cancelled)
    except SpeculationCannotPay as exc:
        measurement.refused = exc.message
    return measurement


def measure_targets(
    client: EngineClient,
    draft: Path,
    targets: list[Path],
    options: MeasureOptions,
    progress: Progress = lambda _name, _done, _total: None,
) -> list[TargetMeasurement]:
    """Each target in turn; two targets that would share a key get numbered keys."""
    return numbered_keys([measure_target(client, draft, t, options, progress) for t in targets])


def numbered_keys(measurements: list[TargetMeasurement]) -> list[TargetMeasurement]:
    """The measurements, a key met again numbered (`qwen3_8b`, `qwen3_8b_2`)."""
    seen: dict[str, int] = {}
    numbered = []
    for m in measurements:
        seen[m.key] = seen.get(m.key, 0) + 1
        # A copy: a status snapshot the window may be reading holds the measurement.
        numbered.append(replace(m, key=f"{m.key}_{seen[m.key]}") if seen[m.key] > 1 else m)
    return numbered
