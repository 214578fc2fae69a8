"""Run a sweep through the engine worker, setting by setting."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from app.core.bench import RunPair, summarize
from app.core.tune import SettingResult, SweepPlan, TuneRun, host_facts, pack_facts
from app.engine.bench import (
    BenchCancelled,
    BenchPlan,
    cannot_pay,
    load_pair,
    measure_agreement,
    run_pairs,
)
from app.engine.client import EngineClient


def run_sweep(
    client: EngineClient,
    target: Path,
    draft: Path,
    plan: SweepPlan,
    cancelled: Callable[[], bool] = lambda: False,
    on_result: Callable[[SettingResult], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> TuneRun:
    """Measure every setting; on cancel, what was measured so far is kept. A pair that
    cannot gain on this MNN is refused (SpeculationCannotPay) unless `force`; forced,
    the run and every summary carry the reason."""
    run = TuneRun(
        str(target),
        str(draft),
        plan,
        host=host_facts(),
        packs=pack_facts(target, draft),
        started=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )
    settings = plan.settings()
    total = len(settings) * plan.pairs_per_setting
    for index, setting in enumerate(settings):
        if cancelled():
            run.cancelled = True
            break
        bench = BenchPlan(
            str(target),
            str(draft),
            setting.target_config(),
            setting.draft_config(),
            setting.draft_length,
            plan.tokens,
            plan.repeats,
            plan.prompts,
        )
        run.cannot_pay = cannot_pay(load_pair(client, bench), force) or run.cannot_pay
        done_before = index * plan.pairs_per_setting

        def progress(done: int, _total: int, base: int = done_before) -> None:
            if on_progress is not None:
                on_progress(base + done, total)

        pairs: list[RunPair]
        try:
            pairs = run_pairs(client, bench, cancelled, progress)
        except BenchCancelled as stop:
            pairs, run.cancelled = stop.args[0], True
        if pairs:
            summary = summarize(pairs)
            measure_agreement(client, summary)
            summary["cannot_pay"] = run.cannot_pay
            result = SettingResult(setting, summary)
            run.results.append(result)
            if on_result is not None:
                on_result(result)
        if run.cancelled:
            break
    return run
