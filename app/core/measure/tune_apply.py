"""Write a measured setting where it belongs: the phone's recipe or this computer's.

The pack's recipes (config.json, config_cpu.json) are what the phone runs; Tune measures
this computer. So what Apply writes goes where it holds:
- thread counts, precision and memory measured here go to this computer's settings for
  the pack (recipe/desktop_settings.py), over the recipe file the key would have been in;
- the draft length goes to the phone's recipe (the target's config.json) only as the
  phone forecast chose it for the chosen phone (phone_forecast.best_draft_length; the
  acceptance by position carries over to a phone, tok/s and thread counts do not); the
  length best here goes to this computer's settings when it differs from what would run;
- adaptive drafting on or off goes to the draft pack's `.draftdeck-drafting.json`
  (DraftDeck's own: a phone drafts the full length), stop_below kept.
Only the keys the sweep measured other than the recipes ran them are written (a Quick
sweep varies the draft length only: thread counts, precision and memory were measured as
the recipes run them, a capped thread count included, and stay as they are). A sweep
that measured adaptive drafting beside the fixed lengths also writes whether the draft
pack drafts adaptively; one that did not never touches that file.
Before anything is written, `planned_changes` lists each change with where it goes (on
the phone, on this computer), its file, old and new value and why, and `apply_refusal`
says why nothing should be written: the recipes changed since the run (its comparison is
stale), or the best is not better than the current recipe beyond noise (tune_refusal.py).
`best_changes` and `applicable` put these together for a saved run, the same for the
Tune page and `draftdeck tune --apply`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.infra.errors import DraftDeckError
from app.core.measure.phone_forecast import NoForecast, PhoneForecast, pair_forecast
from app.core.measure.tune_plan import ADAPTIVE, RECIPE_KEYS, Setting, recipe_defaults
from app.core.measure.tune_refusal import FIELD_WORDS as FIELD_WORDS
from app.core.measure.tune_refusal import apply_refusal as apply_refusal
from app.core.measure.tune_refusal import current_result as current_result
from app.core.measure.tune_refusal import current_row as current_row
from app.core.measure.tune_refusal import refusal_now as refusal_now
from app.core.measure.tune_refusal import stale_reason as stale_reason
from app.core.measure.tune_results import best_result
from app.core.measure.tune_run import TuneRun
from app.core.recipe.desktop_settings import (
    THIS_COMPUTER_FILE,
    DesktopSettings,
    desktop_overlay,
    restore_desktop,
    update_desktop,
)
from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.core.recipe.files import TARGET_CONFIG, RecipeDocument, draft_recipe_path, read_recipe
from app.core.recipe.save_lock import saving
from app.core.recipe.schema import FIELDS

# Each written file's previous contents (None: there was no file): a recipe's data, the
# draft pack's drafting settings, or a pack's settings for this computer.
Snapshot = dict[Path, dict[str, Any] | DraftingSettings | DesktopSettings | None]

# Where a change goes, as the Apply list says it.
PHONE, COMPUTER = "phone", "computer"
WHERE_WORDS = {PHONE: "On the phone", COMPUTER: "On this computer"}
MEASURED_HERE = "measured here"


@dataclass(frozen=True)
class Change:
    path: Path  # the file written
    key: str
    old: Any  # None: not set
    new: Any
    where: str = PHONE  # PHONE: the pack's recipe; COMPUTER: this computer's settings
    recipe: str = ""  # the recipe file a COMPUTER change is over ("" : `path` itself)
    why: str = MEASURED_HERE

    @property
    def file_name(self) -> str:
        """The file as a user knows it: the recipe (for this computer's settings, the
        recipe they are over), in its pack's folder."""
        return f"{self.path.parent.name}/{self.recipe or self.path.name}"

    def text(self) -> str:
        """ "On the phone: t/config.json draft_predict_length 1 → 3 (best on X by the
        forecast)"; "On this computer: d/config_cpu.json thread_num 2 → 1 (measured here)"."""
        old = "(unset)" if self.old is None else _words(self.old)
        return (
            f"{WHERE_WORDS[self.where]}: {self.file_name} {self.key} {old} → "
            f"{_words(self.new)} ({self.why})"
        )


def _words(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _computer_changes(
    setting: Setting, target: Path, draft: Path, fields: tuple[str, ...] | None
) -> list[Change]:
    """Thread counts, precision and memory as measured here, into this computer's
    settings over the recipe file each key is in (the draft's: the one it runs)."""
    running = recipe_defaults(target, draft)
    recipe = {"target": (target, TARGET_CONFIG), "draft": (draft, draft_recipe_path(draft).name)}
    changes = []
    for field_name, (role, key) in RECIPE_KEYS.items():
        if field_name == "draft_length" or (fields is not None and field_name not in fields):
            continue
        new, old = getattr(setting, field_name), running.get(field_name)
        if new != old:
            pack, name = recipe[role]
            changes.append(Change(pack / THIS_COMPUTER_FILE, key, old, new, COMPUTER, name))
    return changes


def _length_changes(
    setting: Setting, target: Path, draft: Path, phone: PhoneForecast | NoForecast | None
) -> list[Change]:
    """The draft length: the forecast's best for the chosen phone into the phone's
    recipe, and the length best here into this computer's settings when what would run
    here then is another."""
    key = "draft_predict_length"
    recipe = target / TARGET_CONFIG
    on_phone = read_recipe(recipe).get(key)
    changes = []
    if isinstance(phone, PhoneForecast) and on_phone != phone.best_draft_length:
        why = f"best on {phone.device} by the forecast"
        changes.append(Change(recipe, key, on_phone, phone.best_draft_length, PHONE, why=why))
        on_phone = phone.best_draft_length
    here = desktop_overlay(target, TARGET_CONFIG).get(key)
    would_run = here if here is not None else on_phone
    if would_run is None:
        would_run = FIELDS[key].default
    if would_run != setting.draft_length:
        running = recipe_defaults(target, draft)["draft_length"]
        changes.append(
            Change(
                target / THIS_COMPUTER_FILE,
                key,
                running,
                setting.draft_length,
                COMPUTER,
                TARGET_CONFIG,
            )
        )
    return changes


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
    why = f"{MEASURED_HERE}; DraftDeck's own drafting: a phone drafts the full length"
    return Change(draft / DRAFTING_FILE, ADAPTIVE, now, setting.adaptive, COMPUTER, why=why)


def planned_changes(
    setting: Setting,
    target: Path,
    draft: Path,
    fields: Iterable[str] | None = None,
    phone: PhoneForecast | NoForecast | None = None,
) -> list[Change]:
    """What `apply_setting` would change (only values that differ): on the phone first,
    then on this computer. `phone`: the chosen phone's forecast for the pair (None: no
    phone chosen), which alone decides the phone recipe's draft length."""
    fields = None if fields is None else tuple(fields)
    changes = []
    if fields is None or "draft_length" in fields:
        changes += _length_changes(setting, target, draft, phone)
    changes += _computer_changes(setting, target, draft, fields)
    drafting = _drafting_change(setting, draft, fields)
    changes = changes if drafting is None else [*changes, drafting]
    return sorted(changes, key=lambda c: c.where != PHONE)


def apply_setting(
    setting: Setting,
    target: Path,
    draft: Path,
    fields: Iterable[str] | None = None,
    phone: PhoneForecast | NoForecast | None = None,
) -> Snapshot:
    """Save the `fields` of `setting` (all of them when None) where each belongs
    (`planned_changes`); returns the files' previous contents, for undo."""
    return apply_changes(planned_changes(setting, target, draft, fields, phone))


def apply_changes(changes: Iterable[Change]) -> Snapshot:
    """Write `changes`; returns the files' previous contents, for undo."""
    before: Snapshot = {}
    recipes: dict[Path, dict[str, Any]] = {}
    here: dict[tuple[Path, str], dict[str, Any]] = {}
    drafting: dict[Path, bool] = {}
    for change in changes:
        if change.path.name == DRAFTING_FILE:
            drafting[change.path] = bool(change.new)
        elif change.where == COMPUTER:
            here.setdefault((change.path.parent, change.recipe), {})[change.key] = change.new
        else:
            recipes.setdefault(change.path, {})[change.key] = change.new
    for path, values in recipes.items():
        with saving(path):  # read and written as one step: another save waits
            doc = RecipeDocument.open_or_new(path)
            before[path] = dict(doc.data) if path.exists() else None
            doc.save({**doc.data, **values})
    for (pack, name), values in here.items():
        was = update_desktop(pack, name, values)
        before.setdefault(pack / THIS_COMPUTER_FILE, was)
    for path, adaptive in drafting.items():
        with saving(path):  # as the recipes: read and written as one step
            settings = read_drafting(path.parent)
            if settings.adaptive != adaptive:
                before[path] = settings if path.exists() else None
                write_drafting(path.parent, replace(settings, adaptive=adaptive))
    return before


def restore(snapshot: Snapshot) -> None:
    """Undo `apply_setting`: put the previous recipes back (atomically, keeping .bak),
    this computer's settings and the drafting settings (removing a file that was not
    there)."""
    for path, data in snapshot.items():
        if data is None:
            path.unlink(missing_ok=True)
        elif isinstance(data, DesktopSettings):
            restore_desktop(path.parent, data)
        elif isinstance(data, DraftingSettings):
            with saving(path):
                write_drafting(path.parent, data)
        else:
            doc = RecipeDocument.open_or_new(path)
            doc.save(data, overwrite_changes=True)


@dataclass(frozen=True)
class BestChanges:
    """What applying a run's best writes: the keys it measured other than the recipes
    ran them (TuneRun.applied_fields), into the pair it measured (not whatever pair is
    selected now), each where it belongs (`planned_changes`)."""

    setting: Setting
    target: Path
    draft: Path
    fields: tuple[str, ...]
    changes: list[Change]
    phone: PhoneForecast | NoForecast | None = None  # the chosen phone's forecast
    phone_only: bool = False  # only the phone's length: the run's best is refused here

    def label(self) -> str:
        """The written values in words ("draft length 3"), as the dialog asks them."""
        if self.phone_only and isinstance(self.phone, PhoneForecast):
            return f"the phone's draft length {self.phone.best_draft_length}"
        return self.setting.label(self.fields)

    def phone_note(self) -> str:
        """What the phone's recipe gets, in words (empty: the sweep measured no length)."""
        if "draft_length" not in self.fields:
            return ""
        if self.phone is None:
            return (
                "No phone is chosen, so the phone's recipe keeps its draft length (choose "
                "a phone on the Pair page for a forecast)."
            )
        if isinstance(self.phone, NoForecast):
            return f"The phone's recipe keeps its draft length: {self.phone.reason}"
        best = self.phone.row(self.phone.best_draft_length)
        pays = "" if best.uplift > 0 else " (even so, drafting is not forecast to pay there)"
        return (
            f"Best on the phone ({self.phone.device}, by the forecast): "
            f"d = {self.phone.best_draft_length}{pays}."
        )

    def used_by(self) -> str:
        """Who runs what is written: the phone gets its recipe with a push; this
        computer's settings and the drafting file are DraftDeck's, never pushed."""
        where = {c.where for c in self.changes}
        said = []
        if PHONE in where:
            said.append("the phone's recipe changed: Push Recipes sends it")
        if COMPUTER in where:
            said.append("Chat and Tune here use this computer's settings")
        if any(c.key == ADAPTIVE and c.new for c in self.changes):
            said.append("a phone drafts the full length (MNN and TokForge do not adapt)")
        return "; ".join(said) or "nothing changed"

    def apply(self) -> Snapshot:
        return apply_changes(self.changes)


def best_changes(
    run: TuneRun, device: str | None = None, phone: PhoneForecast | NoForecast | None = None
) -> BestChanges | None:
    """The changes applying the run's best makes (None: nothing was measured), with the
    forecast for the phone profile `device` (or `phone`, worked out already) deciding
    the phone's draft length."""
    best = best_result(run.results)
    if best is None:
        return None
    target, draft = Path(run.target), Path(run.draft)
    fields = run.applied_fields()
    if phone is None and device is not None and "draft_length" in fields:
        phone = pair_forecast(target, draft, device)
    changes = planned_changes(best.setting, target, draft, fields, phone)
    return BestChanges(best.setting, target, draft, fields, changes, phone)


def applicable(
    run: TuneRun, device: str | None = None, phone: PhoneForecast | NoForecast | None = None
) -> tuple[BestChanges | None, str | None]:
    """What Apply Best writes now, and why the rest is not written (`refusal_now`). The
    phone recipe's draft length is the forecast's choice, not this run's comparison:
    a run whose best does not beat the current recipe here may still set it."""
    refusal = refusal_now(run)
    if refusal is not None and (run.cannot_pay is not None or not run.results):
        return None, refusal
    try:
        best = best_changes(run, device, phone)
    except (OSError, DraftDeckError):
        return None, refusal
    if refusal is None or best is None:
        return best, refusal
    on_phone = [c for c in best.changes if c.where == PHONE]
    if not on_phone:
        return None, refusal
    return replace(best, changes=on_phone + _kept_here(best), phone_only=True), refusal


def _kept_here(best: BestChanges) -> list[Change]:
    """With only the phone's length written, the length this computer runs stays as it
    is: pinned in this computer's settings when it came from the phone's recipe."""
    key = "draft_predict_length"
    if key in desktop_overlay(best.target, TARGET_CONFIG):
        return []
    running = recipe_defaults(best.target, best.draft)["draft_length"]
    if isinstance(best.phone, PhoneForecast) and running == best.phone.best_draft_length:
        return []
    why = "what runs here now, kept"
    return [
        Change(best.target / THIS_COMPUTER_FILE, key, None, running, COMPUTER, TARGET_CONFIG, why)
    ]
