"""Tune measures adaptive drafting beside the fixed draft lengths, and Apply Best turns it
on or off in the draft pack's drafting file (only when the sweep measured it).

Figures are made up or scripted, except in the sweep on the real fixture pair, whose
checks are of structure and of figures that derive from each other (no speed asserted).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.cli.tune import format_rows
from app.core.measure.intervals import median_interval
from app.core.measure.tune_apply import (
    best_changes,
    current_row,
    refusal_now,
    restore,
    stale_reason,
)
from app.core.measure.tune_plan import Setting, SweepPlan, plan_for, recipe_defaults
from app.core.measure.tune_results import (
    SettingResult,
    best_result,
    rows,
    uplift_curves,
    verdict_sentence,
)
from app.core.measure.tune_run import TuneRun
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import StopReason, VerifyMethod
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    FIXED_DRAFTING,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_runner import run_sweep
from app.engine.protocol import (
    AgreementMeasured,
    Done,
    Generate,
    Load,
    MeasureAgreement,
    Request,
    ResetDone,
)
from tests.engine.test_tune import QUICK, _result, _stats
from tests.helpers.engine_events import ScriptedClient, loaded_event

Copy = Callable[..., Path]


def _adaptive(result: SettingResult) -> SettingResult:
    result.setting = replace(result.setting, adaptive=True)
    return result


# -- plans and words ---------------------------------------------------------------------


def test_a_plan_measures_adaptive_drafting_once_per_other_combination() -> None:
    plan = SweepPlan(draft_lengths=(1, 2, 3), draft_threads=(1, 2), adaptive=True)
    settings = plan.settings()
    assert [(s.draft_length, s.draft_threads, s.adaptive) for s in settings] == [
        (1, 1, False), (1, 2, False), (2, 1, False), (2, 2, False), (3, 1, False),
        (3, 2, False), (3, 1, True), (3, 2, True),
    ]  # fmt: skip
    assert plan.swept_fields() == ("draft_length", "draft_threads", "adaptive")
    fixed = replace(plan, adaptive=False)
    assert len(fixed.settings()) == 6 and "adaptive" not in fixed.swept_fields()
    # Quick and Thorough measure it; Apply writes it only when the plan measured it.
    defaults = {
        "draft_length": 3,
        "draft_threads": 1,
        "draft_precision": "low",
        "draft_memory": "low",
        "target_threads": 1,
        "adaptive": False,
    }
    quick = plan_for("quick", defaults)
    assert quick.adaptive and plan_for("thorough", defaults, cores=2).adaptive
    assert [(s.draft_length, s.adaptive) for s in quick.settings()] == [
        (1, False), (2, False), (3, False), (4, False), (4, True),
    ]  # fmt: skip
    assert quick.set_fields(defaults) == ("draft_length", "adaptive")
    assert replace(quick, adaptive=False).set_fields({**defaults, "adaptive": True}) == (
        "draft_length",
    )


def test_labels_say_adaptive_drafting_in_words() -> None:
    adaptive = Setting(4, 1, "low", "low", 1, adaptive=True)
    assert adaptive.label() == (
        "adaptive drafting up to 4, draft 1 thread, low precision, low memory; target 1 thread"
    )
    assert adaptive.label(("draft_length", "adaptive")) == "adaptive drafting up to 4"
    assert adaptive.label(("adaptive",)) == "adaptive drafting up to 4"
    assert Setting(3, 1, "low", "low", 1).label(("draft_length", "adaptive")) == "draft length 3"
    line = format_rows(rows([_adaptive(_result(4, 1.6, 0.9, 0.1, 1.5, 1.7))]))[0]
    assert line.startswith("adaptive drafting up to 4, draft 1 thread, low precision")
    row = rows([_adaptive(_result(4, 1.6, 0.9, 0.1, 1.5, 1.7))])[0]
    # Break-even is a fixed length's: an adaptive round drafts 0 up to the cap.
    assert row["adaptive"] is True and row["break_even_acceptance"] is None


def test_a_tie_names_fixed_drafting_and_the_chart_keeps_adaptive_apart() -> None:
    fixed = _result(4, 1.50, 0.9, 0.1, 1.40, 1.60)
    adaptive = _adaptive(_result(4, 1.55, 0.9, 0.1, 1.45, 1.65))  # the top, but a tie
    shorter = _result(2, 1.20, 0.9, 0.1, 1.15, 1.25)
    results = [shorter, fixed, adaptive]
    assert best_result(results) is fixed
    assert verdict_sentence(results).startswith("Best: draft length 4,")
    assert (
        "the cheapest (fixed drafting, which MNN and TokForge run, before adaptive; shorter "
        "draft, fewer threads) is named."
    ) in verdict_sentence(results)
    # Clearly better: adaptive drafting is named.
    ahead = _adaptive(_result(4, 1.9, 0.9, 0.1, 1.8, 2.0))
    assert best_result([shorter, fixed, ahead]) is ahead
    assert verdict_sentence([shorter, fixed, ahead]).startswith(
        "Best: adaptive drafting up to 4, draft 1 thread"
    )
    curves = uplift_curves(results)
    assert [(c.draft_threads, c.adaptive, c.points) for c in curves] == [
        (1, False, (shorter, fixed)),
        (1, True, (adaptive,)),
    ]


def test_a_verdict_on_adaptive_drafting_that_drafted_nothing() -> None:
    # Stepping aside all along is plain decoding: no acceptance to give (and no crash).
    aside = _adaptive(_result(4, 1.03, 0.9, 0.1, 1.01, 1.05))
    aside.summary["acceptance"] = None
    assert "pays off). Nothing was drafted: adaptive drafting stepped aside throughout." in (
        verdict_sentence([aside])
    )


# -- saved runs from before adaptive drafting --------------------------------------------


def _pair(bundle_copy: Copy) -> tuple[Path, Path]:
    return bundle_copy("fast-target", desktop=True), bundle_copy("fast-draft", desktop=True)


def _run(plan: SweepPlan, target: Path, draft: Path, best: Setting) -> TuneRun:
    """A run of `plan`'s settings on the pair, `best` clearly ahead of the others."""
    results = []
    for s in plan.settings():
        uplift = 2.0 if s == best else 1.2
        results.append(
            SettingResult(s, _result(s.draft_length, uplift, 0.9, 0.1, uplift - 0.05).summary)
        )
        results[-1].summary["uplift_high"] = uplift + 0.05
    as_run = recipe_defaults(target, draft)
    return TuneRun(str(target), str(draft), plan, results=results, as_run=as_run)


def test_a_run_saved_before_adaptive_drafting_reads_as_fixed_and_not_stale(
    bundle_copy: Copy,
) -> None:
    target, draft = _pair(bundle_copy)
    plan = SweepPlan(draft_lengths=(2, 3), draft_memories=("normal",))
    run = _run(plan, target, draft, Setting(3, 1, "low", "normal", 1))
    data = json.loads(json.dumps(run.to_json()))
    # What such a run saved: no "adaptive" in its plan, its rows nor its recipe as run.
    del data["plan"]["adaptive"]
    for row in data["results"]:
        del row["adaptive"]
    del data["recipe_as_run"]["adaptive"]
    old = TuneRun.from_json(data)
    assert old.plan == plan and not old.plan.adaptive
    assert [r.setting.adaptive for r in old.results] == [False, False]
    assert old.as_run is not None and "adaptive" not in old.as_run
    # The pack drafts adaptively now: not stale for a key the run did not keep…
    write_drafting(draft, DraftingSettings(adaptive=True, stop_below=0.2))
    current = recipe_defaults(target, draft)
    assert stale_reason(old, current) is None
    # …but none of its fixed rows is claimed to be the recipe as it runs now,
    assert current_row(old.results, current) is None
    # and applying it leaves the drafting file alone.
    best = best_changes(old)
    assert best is not None and best.fields == ("draft_length",)
    assert all(c.path.name != DRAFTING_FILE for c in best.changes)
    # A run that kept it (fixed only, the pack fixed then) is stale once it is turned on.
    kept = replace(run, as_run={**current, "adaptive": False})
    assert str(stale_reason(kept, current)).startswith(
        "the recipes changed since this run measured them (adaptive drafting off → on)"
    )


# -- Apply Best and Undo -----------------------------------------------------------------


def test_apply_of_adaptive_drafting_writes_the_drafting_file_and_undo_restores_it(
    bundle_copy: Copy,
) -> None:
    target, draft = _pair(bundle_copy)
    write_drafting(draft, DraftingSettings(adaptive=False, stop_below=0.3))
    drafting_before = (draft / DRAFTING_FILE).read_bytes()
    config_before = (target / "config.json").read_bytes()
    plan = replace(plan_for("quick", recipe_defaults(target, draft)), **QUICK)  # type: ignore[arg-type]
    winner = next(s for s in plan.settings() if s.adaptive)
    run = _run(plan, target, draft, winner)
    assert refusal_now(run) is None
    best = best_changes(run)
    assert best is not None and best.label() == "adaptive drafting up to 4"
    # No phone chosen: the length best here is this computer's, never the phone's.
    assert [(c.path.name, c.key, c.old, c.new) for c in best.changes] == [
        (THIS_COMPUTER_FILE, "draft_predict_length", 3, 4),
        (DRAFTING_FILE, "adaptive", False, True),
    ]
    assert best.changes[0].text() == (
        "On this computer: fast-target/config.json draft_predict_length 3 → 4 (measured here)"
    )
    assert best.changes[1].text() == (
        "On this computer: fast-draft/.draftdeck-drafting.json adaptive off → on (measured "
        "here; DraftDeck's own drafting: a phone drafts the full length)"
    )
    snapshot = best.apply()
    assert read_drafting(draft) == DraftingSettings(adaptive=True, stop_below=0.3)
    assert read_desktop(target).of("config.json") == {"draft_predict_length": 4}
    assert (target / "config.json").read_bytes() == config_before
    assert refusal_now(run) == "the best (adaptive drafting up to 4) is the current recipe already"
    restore(snapshot)
    assert (draft / DRAFTING_FILE).read_bytes() == drafting_before
    assert not (target / THIS_COMPUTER_FILE).exists()
    # A pack without the file: Apply makes it, Undo takes it away again.
    (draft / DRAFTING_FILE).unlink()
    snapshot = best.apply()
    assert read_drafting(draft).adaptive
    restore(snapshot)
    assert not (draft / DRAFTING_FILE).exists()


def test_a_fixed_winner_turns_adaptive_drafting_off_only_when_it_was_measured(
    bundle_copy: Copy,
) -> None:
    target, draft = _pair(bundle_copy)
    write_drafting(draft, DraftingSettings(adaptive=True, stop_below=0.2))
    plan = SweepPlan(draft_lengths=(2, 3), draft_memories=("normal",), adaptive=True)
    run = _run(plan, target, draft, Setting(2, 1, "low", "normal", 1))
    best = best_changes(run)
    assert best is not None
    assert [(c.key, c.old, c.new) for c in best.changes] == [
        ("draft_predict_length", 3, 2),
        ("adaptive", True, False),
    ]
    snapshot = best.apply()
    assert read_drafting(draft) == DraftingSettings(adaptive=False, stop_below=0.2)
    restore(snapshot)
    assert read_drafting(draft) == DraftingSettings(adaptive=True, stop_below=0.2)
    # A plan of fixed lengths only says nothing of adaptive drafting: the file stays.
    fixed_only = _run(replace(plan, adaptive=False), target, draft, run.results[0].setting)
    held = (draft / DRAFTING_FILE).read_bytes()
    best = best_changes(fixed_only)
    assert best is not None and [c.key for c in best.changes] == ["draft_predict_length"]
    restore(best.apply())
    assert (draft / DRAFTING_FILE).read_bytes() == held


# -- the sweep -----------------------------------------------------------------------------


class _DraftingEngine(ScriptedClient):
    """Records each load and how every speculative generation was asked to draft."""

    def __init__(self) -> None:
        self.d = 1
        self.log: list[tuple[str, Any]] = []

    def run(self, request: Request[Any], *_: Any, **__: Any) -> object:
        if isinstance(request, Load):
            self.d = request.draft_length or 1
            self.log.append(("load", self.d))
            return loaded_event(draft_length=self.d)
        if isinstance(request, MeasureAgreement):
            return AgreementMeasured(VerifyAgreement(1.0, 4, 4, self.d, VerifyMethod.BATCHED))
        if isinstance(request, Generate):
            if request.mode == "speculative":
                self.log.append(("drafting", request.drafting))
            stats = _stats(request.mode or "speculative", 100, 0.5, self.d)
            return Done(tokens=(1,) * 101, text="", stopped_by=StopReason.MAX_TOKENS, stats=stats)
        return ResetDone()


def test_adaptive_settings_draft_adaptively_with_the_packs_stop_after_a_fresh_load(
    bundle_copy: Copy,
) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    write_drafting(draft, DraftingSettings(adaptive=False, stop_below=0.25))
    plan = SweepPlan(draft_lengths=(1, 2), prompts=("a",), max_repeats=1, adaptive=True)
    engine = _DraftingEngine()
    run = run_sweep(engine, target, draft, plan, remeasure=False)  # type: ignore[arg-type]
    assert [(r.setting.draft_length, r.setting.adaptive) for r in run.results] == [
        (1, False),
        (2, False),
        (2, True),
    ]
    # Every setting loads the pair (a new adaptive controller), then drafts as it says.
    loads = [i for i, (what, _) in enumerate(engine.log) if what == "load"]
    assert [engine.log[i][1] for i in loads] == [1, 2, 2]
    per_setting = [
        {drafting for what, drafting in engine.log[start:end] if what == "drafting"}
        for start, end in zip(loads, [*loads[1:], len(engine.log)], strict=True)
    ]
    adaptive = DraftingSettings(adaptive=True, stop_below=0.25)
    assert per_setting == [{FIXED_DRAFTING}, {FIXED_DRAFTING}, {adaptive}]
    assert run.as_run is not None and run.as_run["adaptive"] is False


def test_a_sweep_on_the_real_pair_measures_adaptive_drafting(
    client: EngineClient, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy)
    write_drafting(draft, DraftingSettings(adaptive=False, stop_below=0.1))
    plan = replace(plan_for("quick", recipe_defaults(target, draft)), **QUICK)  # type: ignore[arg-type]
    plan = replace(plan, draft_lengths=(1, 3))
    run = run_sweep(client, target, draft, plan)
    assert [(r.setting.draft_length, r.setting.adaptive) for r in run.results] == [
        (1, False),
        (3, False),
        (3, True),
    ]
    row = rows(run.results)[2]
    assert row["adaptive"] is True and row["draft_length"] == 3
    summary = run.results[2].summary
    interval = median_interval(summary["pair_ratios"])
    assert (row["uplift_low"], row["uplift"], row["uplift_high"]) == (
        interval.low,
        interval.median,
        interval.high,
    )
    assert row["uplift"] > 0 and row["spec_tok_s"] > 0 and row["pairs"] == summary["runs"] > 0
    assert row["acceptance"] is None or 0.0 <= row["acceptance"] <= 1.0
    # Adaptive drafting is exact: greedy output equals plain decoding's (memory normal).
    assert row["lossless"] is True
    assert row["break_even_acceptance"] is None
    record = run.to_json()
    assert record["recipe_as_run"]["adaptive"] is False
    assert TuneRun.from_json(json.loads(json.dumps(record))).results[2].setting.adaptive
