"""Run a sweep through the engine worker, setting by setting.

Each setting: load, warm up (one unmeasured run of each mode), then rounds of
interleaved plain/speculative pairs, one per prompt, each run long enough to time
(SweepPlan.min_run_seconds). Rounds continue until there are enough pairs for a 95 %
interval and it is narrow enough (SweepPlan.target_half_width), or the setting's time
budget or round limit is spent; the summary says which (`repeats`,
`interval_target_met`, `seconds`). Then the leading candidates (the top uplift and all
whose intervals overlap it) are measured again with fresh pairs, and only those fresh
figures name the best, so the noise that lifted a setting to the top in the first pass
does not choose it.

Greedy by default (speculative output then equals plain output when the target's recipe
verifies exactly); a plan that samples decodes with the target recipe's sampler, rows
at swept temperatures with that sampler at their temperature (pair i of a round with
seed plan.seed + i in both modes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.measure.bench import RunPair, pair_ratios, summarize
from app.core.measure.bench_summary import BenchSummary, SweepFacts
from app.core.measure.intervals import median_interval
from app.core.measure.tune_plan import Setting, SweepPlan, recipe_defaults
from app.core.measure.tune_results import SettingResult, leading
from app.core.measure.tune_run import TuneRun, host_facts, pack_facts
from app.core.recipe.files import target_run_recipe
from app.core.recipe.sampler_settings import SamplerSettings, sampler_settings
from app.engine.client.bench import (
    BenchCancelled,
    BenchPlan,
    cannot_pay,
    load_pair,
    measure_agreement,
    run_pairs,
    warm_up,
)
from app.engine.client.engine_client import EngineClient


def interval_target_met(pairs: list[RunPair], plan: SweepPlan) -> bool:
    ratios = pair_ratios(pairs)
    if not ratios:
        return False
    interval = median_interval(ratios)
    return interval.met_level and interval.relative_half_width <= plan.target_half_width


class _Progress:
    def __init__(self, plan: SweepPlan, callback: Callable[[int, int], None] | None) -> None:
        self.done = 0
        self.total = len(plan.settings()) * plan.pairs_per_setting
        self.callback = callback

    def add(self, pairs: int = 1) -> None:
        self.done += pairs
        self.total = max(self.total, self.done)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def expect(self, pairs: int) -> None:
        self.total += pairs


def _measure(
    client: EngineClient,
    target: Path,
    draft: Path,
    setting: Setting,
    plan: SweepPlan,
    cancelled: Callable[[], bool],
    progress: _Progress,
    force: bool,
    sampler: SamplerSettings | None,
    first_pass: dict[str, Any] | None = None,
) -> tuple[BenchSummary | None, str | None, bool]:
    """(summary or None, cannot-pay reason, cancelled) for one setting; `sampler` is the
    recipe's (None: greedy); `first_pass`: a re-measured leader's first figures."""
    bench = BenchPlan(
        str(target),
        str(draft),
        setting.target_config(),
        setting.draft_config(),
        setting.draft_length,
        plan.tokens,
        1,  # one pair per prompt a round
        plan.prompts,
        warmup=False,
        min_run_seconds=plan.min_run_seconds,
        sampler=setting.sampler(sampler),
        seed=plan.seed,
    )
    reason = cannot_pay(load_pair(client, bench), force)
    generations = warm_up(client, bench)
    started = time.monotonic()
    pairs: list[RunPair] = []
    rounds, stopped, met = 0, False, False
    while True:
        try:
            pairs += run_pairs(client, bench, cancelled, lambda *_: progress.add(), generations)
        except BenchCancelled as stop:
            pairs += stop.args[0]
            stopped = True
        rounds += 1
        met = interval_target_met(pairs, plan)
        spent = time.monotonic() - started
        if stopped:
            break
        if rounds >= plan.min_rounds and (
            met or spent >= plan.budget_seconds or rounds >= plan.max_repeats
        ):
            break
        if rounds >= plan.min_rounds:
            progress.expect(len(plan.prompts))
    if not pairs:
        return None, reason, stopped
    facts = SweepFacts(
        cannot_pay=reason,
        repeats=rounds,
        interval_target_met=met,
        target_half_width=plan.target_half_width,
        seconds=time.monotonic() - started,
        budget_seconds=plan.budget_seconds,
        generations_per_run=generations,
        first_pass=first_pass,
    )
    return BenchSummary(summarize(pairs), measure_agreement(client), facts), reason, stopped


def run_sweep(
    client: EngineClient,
    target: Path,
    draft: Path,
    plan: SweepPlan,
    cancelled: Callable[[], bool] = lambda: False,
    on_result: Callable[[SettingResult], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    force: bool = False,
    remeasure: bool = True,
    on_stage: Callable[[int | None], None] | None = None,
) -> TuneRun:
    """Measure every setting, then re-measure the leaders; on cancel, what was measured
    so far is kept. A pair that cannot gain on this MNN is refused (SpeculationCannotPay)
    unless `force`; forced, the run and every summary carry the reason. `on_stage` hears
    each setting begin (None), then each re-measure (how many leaders are re-measured)."""
    run = TuneRun(
        str(target),
        str(draft),
        plan,
        host=host_facts(),
        packs=pack_facts(target, draft),
        started=time.strftime("%Y-%m-%dT%H:%M:%S"),
        # What "the current recipe" is for this run, and what a later edit makes stale.
        as_run=recipe_defaults(target, draft),
    )
    stage = on_stage or (lambda _remeasures: None)
    progress = _Progress(plan, on_progress)
    # The target's recipe defines the distribution; the swept keys hold no sampler key.
    sampler = sampler_settings(target_run_recipe(target)) if plan.sample else None
    for setting in plan.settings():
        if cancelled():
            run.cancelled = True
            break
        stage(None)
        summary, reason, stopped = _measure(
            client, target, draft, setting, plan, cancelled, progress, force, sampler
        )
        run.cannot_pay = reason or run.cannot_pay
        if summary is not None:
            result = SettingResult(setting, summary.to_json())
            run.results.append(result)
            if on_result is not None:
                on_result(result)
        if stopped:
            run.cancelled = True
            break
    if remeasure and not run.cancelled:
        _remeasure_leaders(
            client, target, draft, plan, run, cancelled, progress, force, sampler, stage
        )
    if on_progress is not None:
        on_progress(progress.done, progress.done)
    return run


def _remeasure_leaders(
    client: EngineClient,
    target: Path,
    draft: Path,
    plan: SweepPlan,
    run: TuneRun,
    cancelled: Callable[[], bool],
    progress: _Progress,
    force: bool,
    sampler: SamplerSettings | None,
    stage: Callable[[int | None], None],
) -> None:
    """Fresh interleaved runs for every leading candidate when there is more than one;
    their summaries are replaced by the fresh ones (the first pass kept beside)."""
    leaders = leading(run.results)
    if len(leaders) < 2:
        return
    progress.expect(len(leaders) * plan.pairs_per_setting)
    for result in leaders:
        if cancelled():
            run.cancelled = True
            return
        stage(len(leaders))
        first = result.summary
        first_pass = {
            k: first.get(k) for k in ("uplift", "uplift_low", "uplift_high", "runs", "repeats")
        }
        summary, _reason, stopped = _measure(
            client,
            target,
            draft,
            result.setting,
            plan,
            cancelled,
            progress,
            force,
            sampler,
            first_pass,
        )
        if stopped or summary is None:
            run.cancelled = True
            return
        result.summary = summary.to_json()
