"""Write a measured setting into the pair's recipes, through the recipe module.

Only the keys the sweep measured other than the recipes ran them are written (a Quick
sweep varies the draft length only: thread counts, precision and memory were measured as
the recipes run them, a capped thread count included, and stay as the files have them).
A sweep that measured adaptive drafting beside the fixed lengths also writes whether the
draft pack drafts adaptively (its `.draftdeck-drafting.json`, stop_below kept); one that
did not never touches that file.
Before anything is written, `planned_changes` lists each key's old and new value per file,
and `apply_refusal` says why nothing should be written: the recipes changed since the run
(its comparison is stale), or the best is not better than the current recipe beyond noise.
`best_changes` and `refusal_now` put these together for a saved run, the same for the
Tune page and `draftdeck tune --apply`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.infra.errors import DraftDeckError
from app.core.measure.tune_plan import ADAPTIVE, RECIPE_KEYS, RUN_FIELDS, Setting, recipe_defaults
from app.core.measure.tune_results import TIMES, SettingResult, at_recipe_sampler, best_result
from app.core.measure.tune_run import TuneRun
from app.core.recipe.draft_recipes import draft_recipes
from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.core.recipe.files import TARGET_CONFIG, RecipeDocument
from app.core.recipe.save_lock import saving

# Each written file's previous contents (None: there was no file): a recipe's data, or
# the draft pack's drafting settings.
Snapshot = dict[Path, dict[str, Any] | DraftingSettings | None]

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


@dataclass(frozen=True)
class Change:
    path: Path
    key: str
    old: Any  # None: not set in the file
    new: Any

    def text(self) -> str:
        old = "(unset)" if self.old is None else repr(self.old)
        return f"{self.path.parent.name}/{self.path.name}: {self.key}: {old} → {self.new!r}"


def _changes(
    setting: Setting, target: Path, draft: Path, fields: Iterable[str] | None = None
) -> dict[Path, dict[str, Any]]:
    # The draft recipe the engine ran, and its twin when the two are the same recipe:
    # applying to one alone would leave them disagreeing (core/recipe/draft_recipes.py).
    files = {"target": [target / TARGET_CONFIG], "draft": draft_recipes(draft).in_step()}
    out: dict[Path, dict[str, Any]] = {}
    for field_name, (role, key) in RECIPE_KEYS.items():
        if fields is not None and field_name not in fields:
            continue
        for path in files[role]:
            out.setdefault(path, {})[key] = getattr(setting, field_name)
    return out


def _drafting_change(
    setting: Setting, draft: Path, fields: tuple[str, ...] | None
) -> Change | None:
    """Adaptive drafting turned on or off in the draft pack, when `fields` has it and the
    pack drafts otherwise now (its defaults without a file)."""
    if fields is not None and ADAPTIVE not in fields:
        return None
    now = read_drafting(draft).adaptive
    if now == setting.adaptive:
        return None
    return Change(draft / DRAFTING_FILE, ADAPTIVE, now, setting.adaptive)


def planned_changes(
    setting: Setting, target: Path, draft: Path, fields: Iterable[str] | None = None
) -> list[Change]:
    """What `apply_setting` would change: only keys whose value differs."""
    fields = None if fields is None else tuple(fields)
    changes = []
    for path, values in _changes(setting, target, draft, fields).items():
        current = RecipeDocument.open_or_new(path).data if path.exists() else {}
        for key, new in values.items():
            if current.get(key) != new:
                changes.append(Change(path, key, current.get(key), new))
    drafting = _drafting_change(setting, draft, fields)
    return changes if drafting is None else [*changes, drafting]


def apply_setting(
    setting: Setting, target: Path, draft: Path, fields: Iterable[str] | None = None
) -> Snapshot:
    """Save the `fields` of `setting` (all of them when None); returns the files'
    previous contents, for undo."""
    fields = None if fields is None else tuple(fields)
    before: Snapshot = {}
    for path, values in _changes(setting, target, draft, fields).items():
        with saving(path):  # read and written as one step: another save waits
            doc = RecipeDocument.open_or_new(path)
            before[path] = dict(doc.data) if path.exists() else None
            doc.save({**doc.data, **values})
    if fields is None or ADAPTIVE in fields:
        path = draft / DRAFTING_FILE
        with saving(path):  # as the recipes: read and written as one step
            settings = read_drafting(draft)
            if settings.adaptive != setting.adaptive:
                before[path] = settings if path.exists() else None
                write_drafting(draft, replace(settings, adaptive=setting.adaptive))
    return before


def restore(snapshot: Snapshot) -> None:
    """Undo `apply_setting`: put the previous recipes back (atomically, keeping .bak)
    and the drafting settings (removing a file that was not there)."""
    for path, data in snapshot.items():
        if data is None:
            path.unlink(missing_ok=True)
        elif isinstance(data, DraftingSettings):
            with saving(path):
                write_drafting(path.parent, data)
        else:
            doc = RecipeDocument.open_or_new(path)
            doc.save(data, overwrite_changes=True)


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
    measured them, and the best must beat, beyond noise (its 95 % interval's lower
    end), both plain decoding and the current recipe's measured uplift."""
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
    low = best.interval.low
    if not best.pays_off:
        return (
            f"the best ({what}: {best.uplift:.2f}{TIMES}) is not faster than plain "
            f"decoding beyond noise: its 95 % interval starts at {low:.2f}{TIMES}, not above 1"
        )
    if now is not None and low <= now.uplift:
        return (
            f"the best ({what}) is not better than the current recipe beyond noise: its "
            f"95 % interval starts at {low:.2f}{TIMES}, the current recipe "
            f"({now.setting.label(fields)}) measured {now.uplift:.2f}{TIMES}"
        )
    return None


def refusal_now(run: TuneRun) -> str | None:
    """`apply_refusal` against the measured pair's recipes as they are now."""
    try:
        current = recipe_defaults(Path(run.target), Path(run.draft))
    except (OSError, DraftDeckError) as exc:
        return f"the pair's recipes cannot be read: {exc}"
    return apply_refusal(run, current)


@dataclass(frozen=True)
class BestChanges:
    """What applying a run's best writes: the keys it measured other than the recipes
    ran them (TuneRun.applied_fields), into the pair it measured (not whatever pair is
    selected now)."""

    setting: Setting
    target: Path
    draft: Path
    fields: tuple[str, ...]
    changes: list[Change]

    def label(self) -> str:
        """The written values in words ("draft length 3"), as the dialog asks them."""
        return self.setting.label(self.fields)

    def used_by(self) -> str:
        """Who runs what is written: a phone never drafts adaptively (the drafting file
        is DraftDeck's own, never pushed)."""
        if self.setting.adaptive and ADAPTIVE in self.fields:
            return "Chat uses it (a phone drafts the full length: MNN and TokForge do not adapt)"
        return "Chat and the phone push use it"

    def apply(self) -> Snapshot:
        return apply_setting(self.setting, self.target, self.draft, self.fields)


def best_changes(run: TuneRun) -> BestChanges | None:
    """The changes applying the run's best makes (None: nothing was measured)."""
    best = best_result(run.results)
    if best is None:
        return None
    target, draft = Path(run.target), Path(run.draft)
    fields = run.applied_fields()
    changes = planned_changes(best.setting, target, draft, fields)
    return BestChanges(best.setting, target, draft, fields, changes)
