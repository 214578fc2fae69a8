"""Run a sweep through the engine worker, setting by setting.

Each setting: load, warm up (one unmeasured run of each mode), then rounds of
interleaved plain/speculative pairs, one per prompt, each run long enough to time
(SweepPlan.min_run_seconds). Rounds continue until there are enough pairs for a 95 %
interval and it is narrow enough (SweepPlan.target_half_width), or the setting's time
budget or round limit is spent; the summary says which (`repeats`,
`interval_target_met`, `seconds`). Then the leading candidates (the top uplift and all
whose intervals overlap it) are measured again with fresh pairs, and only those fresh
figures name the best, so the noise that lifted a setting to the top in the first pass
does not choose it. A re-measure whose interval does not overlap its first pass's
(the machine was disturbed) runs on to its budget and says so (remeasure.py).

A fixed setting drafts its full length every round (FIXED_DRAFTING, what MNN and
TokForge run); an adaptive one drafts adaptively up to its length with the draft pack's
own stop_below. Each setting loads the pair afresh, and a load starts a new adaptive
controller (engine/worker/session.py), so no setting inherits what another learned.

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
from app.core.measure.pair_acceptance import add_tallies
from app.core.measure.pair_cost import BY_TUNE, record_cost
from app.core.measure.remeasure import disturbance, interval_target_met, rounds_done
from app.core.measure.tune_eta import (
    ShownEstimate,
    SweepClock,
    SweepProgress,
    expected_pairs,
    seconds_left,
)
from app.core.measure.tune_plan import Setting, SweepPlan, recipe_defaults
from app.core.measure.tune_results import SettingResult, leading
from app.core.measure.tune_run import TuneRun, host_facts, pack_facts
from app.core.recipe.drafting_settings import FIXED_DRAFTING, DraftingSettings, read_drafting
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


class _Progress:
    """The sweep's clock and what it reports once a setting is set up and after each
    pair: pairs done, the pairs the run rule expects in all, and the time left and the
    share done as shown (tune_eta), on `now`'s clock."""

    def __init__(
        self,
        plan: SweepPlan,
        run: TuneRun,
        callback: Callable[[SweepProgress], None] | None,
        now: Callable[[], float],
    ) -> None:
        self.plan, self.run, self.callback, self.now = plan, run, callback, now
        self.started = now()
        self.timing = SweepClock(len(plan.settings()))
        self.shown = ShownEstimate()

    def _elapsed(self) -> float:
        return self.now() - self.started

    def stage(self, remeasures: int | None = None) -> None:
        """A stage begins: a setting (None), or a re-measure of `remeasures` leaders."""
        self.timing = self.timing.started(self._elapsed(), remeasures)

    def ready(self, pair_guess: float | None) -> None:
        """The current stage is set up (loaded, warmed up); `pair_guess`: a pair's
        seconds as its warm-up foretells them."""
        self.timing = self.timing.ready(self._elapsed(), pair_guess)
        self._report()

    def add(self) -> None:
        """A pair of the current stage is done."""
        self.timing = self.timing.paired(self._elapsed(), len(leading(self.run.results)))
        self._report()

    def _report(self) -> None:
        if self.callback is None:
            return
        at = self._elapsed()
        self.shown = self.shown.next(at, seconds_left(self.plan, self.timing, at))
        done = len(self.timing.pair_ends)
        total = expected_pairs(self.plan, self.timing)
        self.callback(SweepProgress(done, total, self.shown.seconds_left(at), self.shown.share))

    def end(self) -> None:
        """The sweep is over: every pair it runs is done."""
        if self.callback is not None:
            done = len(self.timing.pair_ends)
            self.callback(SweepProgress(done, done, 0.0, 1.0))


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
    adaptive: DraftingSettings,
    first_pass: dict[str, Any] | None = None,
) -> tuple[BenchSummary | None, str | None, bool]:
    """(summary or None, cannot-pay reason, cancelled) for one setting; `sampler` is the
    recipe's (None: greedy); `adaptive`: how an adaptive setting drafts; `first_pass`: a
    re-measured leader's first figures."""
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
        drafting=adaptive if setting.adaptive else FIXED_DRAFTING,
    )
    loaded = load_pair(client, bench)
    reason = cannot_pay(loaded, force)
    try:
        # Before the pairs: a setting a cancel cuts short keeps its pairs and needs it.
        agreement = measure_agreement(client)
        warming = progress.now()
        generations = warm_up(client, bench)
    except BenchCancelled:
        return None, reason, True
    # A warm-up is one generation of each mode; a pair, `generations` of each.
    progress.ready(generations * (progress.now() - warming))
    started = progress.now()
    pairs: list[RunPair] = []
    rounds, stopped, met, disturbed = 0, False, False, None
    while True:
        try:
            pairs += run_pairs(client, bench, cancelled, lambda *_: progress.add(), generations)
        except BenchCancelled as stop:
            pairs += stop.args[0]
            stopped = True
        rounds += 1
        ratios = pair_ratios(pairs)
        met = interval_target_met(ratios, plan)
        disturbed = disturbance(first_pass, ratios)
        if stopped or rounds_done(plan, rounds, met, progress.now() - started, bool(disturbed)):
            break
    if not pairs:
        return None, reason, stopped
    if not setting.adaptive:
        # Greedy acceptance by position carries over to a phone: the forecast the Tune
        # page shows learns from it (add_tallies leaves sampled runs out). Adaptive rows
        # draft lengths of their own choosing, which would bias the later positions.
        for pair in pairs:
            add_tallies(target, draft, pair.speculative, loaded.lossless_expected)
    facts = SweepFacts(
        cannot_pay=reason,
        repeats=rounds,
        interval_target_met=met,
        target_half_width=plan.target_half_width,
        seconds=progress.now() - started,
        budget_seconds=plan.budget_seconds,
        generations_per_run=generations,
        first_pass=first_pass,
        disturbed=disturbed,
    )
    figures = summarize(pairs)
    # The Pair page and `check` say this measured c in place of their estimate.
    record_cost(target, draft, figures, BY_TUNE)
    return BenchSummary(figures, agreement, facts), reason, stopped


def run_sweep(
    client: EngineClient,
    target: Path,
    draft: Path,
    plan: SweepPlan,
    cancelled: Callable[[], bool] = lambda: False,
    on_result: Callable[[SettingResult], None] | None = None,
    on_progress: Callable[[SweepProgress], None] | None = None,
    force: bool = False,
    remeasure: bool = True,
    on_stage: Callable[[int | None], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> TuneRun:
    """Measure every setting, then re-measure the leaders; on cancel, what was measured
    so far is kept. A pair that cannot gain on this MNN is refused (SpeculationCannotPay)
    unless `force`; forced, the run and every summary carry the reason. `on_stage` hears
    each setting begin (None), then each re-measure (how many leaders are re-measured);
    `on_progress` each pair done (SweepProgress); `clock` times the budgets and the pace."""
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
    told = on_stage or (lambda _remeasures: None)
    progress = _Progress(plan, run, on_progress, clock)

    def stage(remeasures: int | None) -> None:
        progress.stage(remeasures)
        told(remeasures)

    # The target's recipe defines the distribution; the swept keys hold no sampler key.
    sampler = sampler_settings(target_run_recipe(target)) if plan.sample else None
    # The pack's stop_below, read once: every adaptive setting drafts with the same.
    adaptive = DraftingSettings(adaptive=True, stop_below=read_drafting(draft).stop_below)
    for setting in plan.settings():
        if cancelled():
            run.cancelled = True
            break
        stage(None)
        summary, reason, stopped = _measure(
            client, target, draft, setting, plan, cancelled, progress, force, sampler, adaptive
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
            client, target, draft, plan, run, cancelled, progress, force, sampler, adaptive, stage
        )
    progress.end()
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
    adaptive: DraftingSettings,
    stage: Callable[[int | None], None],
) -> None:
    """Fresh interleaved runs for every leading candidate when there is more than one;
    their summaries are replaced by the fresh ones (the first pass kept beside)."""
    leaders = leading(run.results)
    if len(leaders) < 2:
        return
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
            adaptive,
            first_pass,
        )
        if stopped or summary is None:
            run.cancelled = True
            return
        result.summary = summary.to_json()
