"""Whether a Tune run's best may be applied to the pair's recipes as they are now: the
row that is the current recipe as it runs, whether the recipes changed since the run
(its comparison is then stale), and whether the best beats the current recipe beyond
noise (tune_apply.py writes what may be)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.infra.errors import DraftDeckError
from app.core.measure.intervals import TIMES
from app.core.measure.tune_plan import ADAPTIVE, RUN_FIELDS, recipe_defaults
from app.core.measure.tune_results import SettingResult, at_recipe_sampler, best_result
from app.core.measure.tune_run import TuneRun

# A swept key in the words of Setting.label, for saying what changed.
FIELD_WORDS = {
    "draft_length": "draft length",
    "draft_threads": "draft threads",
    "draft_precision": "draft precision",
    "draft_memory": "draft memory",
    "target_threads": "target threads",
    ADAPTIVE: "adaptive drafting",
}


def _value_words(field_name: str, value: Any) -> str:
    if field_name == ADAPTIVE and isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def current_result(run: TuneRun, current: dict[str, Any]) -> SettingResult | None:
    """The run's row that is the current recipe as it runs (current_row)."""
    return current_row(run.results, current)


def current_row(results: list[SettingResult], current: dict[str, Any]) -> SettingResult | None:
    """The measured row that is the current recipe as it runs: every swept key as
    `current` (tune_plan.recipe_defaults) has it, at the recipe's sampler, drafting as
    the pack drafts (a pack drafting adaptively has no row in a fixed-only sweep)."""
    for r in at_recipe_sampler(results):  # a swept temperature is never the recipe
        if all(getattr(r.setting, f) == current.get(f) for f in RUN_FIELDS):
            return r
    return None


def stale_reason(run: TuneRun, current: dict[str, Any]) -> str | None:
    """How the recipes changed since the run measured them, in a key the run held as it
    ran (None: none did, or the run did not keep what they were). Its rows were then
    measured with another recipe than the one that runs now. A change in a key the run
    swept is not stale: another of its rows is the current recipe then (current_row).
    A key the run did not keep (adaptive drafting, in a run saved before it was kept)
    is not known to have changed: not stale for it."""
    before = run.as_run
    if before is None:
        return None
    swept = run.applied_fields()
    changed = [
        f"{FIELD_WORDS[f]} {_value_words(f, before[f])} → {_value_words(f, current.get(f))}"
        for f in RUN_FIELDS
        if f not in swept and f in before and before[f] != current.get(f)
    ]
    if not changed:
        return None
    return (
        f"the recipes changed since this run measured them ({', '.join(changed)}), so its "
        "comparison with the current recipe is stale: Start again to measure them"
    )


def apply_refusal(run: TuneRun, current: dict[str, Any]) -> str | None:
    """Why the run's best must not be applied, or None. The recipes must be as the run
    measured them, and the best must beat, beyond noise (its interval's lower end),
    both plain decoding and the current recipe's measured uplift."""
    if run.cannot_pay is not None:
        return run.cannot_pay
    best = best_result(run.results)
    if best is None:
        return "nothing was measured"
    fields = run.applied_fields()
    what = best.setting.label(fields) if fields else best.setting.label()
    if all(getattr(best.setting, f) == current.get(f) for f in fields or RUN_FIELDS):
        return f"the best ({what}) is the current recipe already"
    stale = stale_reason(run, current)
    if stale is not None:
        return stale
    now = current_result(run, current)
    # Worded as the verdict beside it words it, at the level it has (intervals.py).
    interval = best.interval_text()
    if not best.pays_off:
        return (
            f"the best ({what}: {best.uplift:.2f}{TIMES}) is not faster than plain "
            f"decoding beyond noise: its {interval} is not above 1"
        )
    if now is not None and best.interval.low <= now.uplift:
        return (
            f"the best ({what}) is not better than the current recipe beyond noise: its "
            f"{interval} starts at or below the {now.uplift:.2f}{TIMES} the current "
            f"recipe ({now.setting.label(fields)}) measured"
        )
    return None


def refusal_now(run: TuneRun) -> str | None:
    """`apply_refusal` against the measured pair's recipes as they are now."""
    try:
        current = recipe_defaults(Path(run.target), Path(run.draft))
    except (OSError, DraftDeckError) as exc:
        return f"the pair's recipes cannot be read: {exc}"
    return apply_refusal(run, current)
