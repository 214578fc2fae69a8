"""Tune's Apply writes into the phone's recipe only what carries over to a phone: the
draft length, as the phone forecast chose it for the chosen phone. Thread counts,
precision and memory measured here, and the length best here, go to this computer's
settings; each change says where it goes and why, and Undo takes them all back."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.core.measure import phone_profiles
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
from app.core.measure.phone_forecast import (
    ForecastRow,
    NoForecast,
    PhoneForecast,
    pair_forecast,
)
from app.core.measure.tune_apply import (
    COMPUTER,
    PHONE,
    applicable,
    apply_changes,
    best_changes,
    planned_changes,
    refusal_now,
    restore,
)
from app.core.measure.tune_plan import Setting, SweepPlan, plan_for, recipe_defaults
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.core.recipe.drafting_settings import FIXED_DRAFTING, write_drafting
from app.core.recipe.files import target_run_recipe
from tests.helpers.cli import run_cli
from tests.helpers.tune_results import setting_result

Copy = Callable[..., Path]
PHONE_NAME = "RedMagic 11 Pro (SM8850, published)"


def _forecast(best: int) -> PhoneForecast:
    rows = tuple(
        ForecastRow(d, 11.45, 11.45 * (1.3 - abs(d - best) / 10), 0.3 - abs(d - best) / 10, 0, 1)
        for d in range(1, 7)
    )
    return PhoneForecast(PHONE_NAME, rows, best, ("an assumption",))


def _phone_pair(bundle_copy: Copy) -> tuple[Path, Path]:
    """The TokForge phone recipes: target on the GPU at d = 1, draft on 2 threads."""
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    config = json.loads((target / "config.json").read_text())
    config.update(backend_type="opencl", thread_num=68, draft_predict_length=1)
    (target / "config.json").write_text(json.dumps(config, indent=4))
    (draft / "config_cpu.json").write_text(
        json.dumps({"backend_type": "cpu", "thread_num": 2, "power": "high", "memory": "low"})
    )
    write_drafting(draft, FIXED_DRAFTING)
    return target, draft


def _recipes(target: Path, draft: Path) -> tuple[bytes, bytes]:
    return (target / "config.json").read_bytes(), (draft / "config_cpu.json").read_bytes()


def test_the_forecast_s_length_goes_to_the_phone_and_the_rest_to_this_computer(
    bundle_copy: Copy,
) -> None:
    target, draft = _phone_pair(bundle_copy)
    # Best here: d = 6, one thread each, memory normal.
    setting = Setting(6, 1, "low", "normal", 1)
    changes = planned_changes(setting, target, draft, phone=_forecast(3))
    assert [c.text() for c in changes] == [
        "On the phone: fast-target/config.json draft_predict_length 1 → 3 "
        f"(best on {PHONE_NAME} by the forecast)",
        "On this computer: fast-target/config.json draft_predict_length 1 → 6 (measured here)",
        "On this computer: fast-draft/config_cpu.json thread_num 2 → 1 (measured here)",
        "On this computer: fast-draft/config_cpu.json memory low → normal (measured here)",
        f"On this computer: fast-target/config.json thread_num "
        f"{recipe_defaults(target, draft)['target_threads']} → 1 (measured here)",
    ]
    snapshot = apply_changes(changes)
    phone_recipe = json.loads((target / "config.json").read_text())
    # The phone's recipe: only the forecast's length; the GPU target and the draft's two
    # threads as the phone needs them.
    assert phone_recipe["draft_predict_length"] == 3
    assert (phone_recipe["backend_type"], phone_recipe["thread_num"]) == ("opencl", 68)
    assert json.loads((draft / "config_cpu.json").read_text())["thread_num"] == 2
    assert read_desktop(target).of("config.json") == {"draft_predict_length": 6, "thread_num": 1}
    assert read_desktop(draft).of("config_cpu.json") == {"thread_num": 1, "memory": "normal"}
    # What runs here is the best here.
    assert recipe_defaults(target, draft) | {"adaptive": False} == {
        "draft_length": 6,
        "draft_threads": 1,
        "draft_precision": "low",
        "draft_memory": "normal",
        "target_threads": 1,
        "adaptive": False,
    }
    assert target_run_recipe(target)["backend_type"] == "cpu"
    restore(snapshot)
    assert json.loads((target / "config.json").read_text())["draft_predict_length"] == 1
    assert not (target / THIS_COMPUTER_FILE).exists()
    assert not (draft / THIS_COMPUTER_FILE).exists()


def test_without_a_forecast_the_phone_s_recipe_is_left_alone(bundle_copy: Copy) -> None:
    target, draft = _phone_pair(bundle_copy)
    before = _recipes(target, draft)
    setting = Setting(6, 2, "low", "low", recipe_defaults(target, draft)["target_threads"])
    for phone in (None, NoForecast("No acceptance measured yet for this pair")):
        changes = planned_changes(setting, target, draft, phone=phone)
        assert [(c.where, c.key, c.old, c.new) for c in changes] == [
            (COMPUTER, "draft_predict_length", 1, 6)
        ]
    # The forecast's best is what runs here as well: the phone's recipe alone changes.
    changes = planned_changes(replace(setting, draft_length=3), target, draft, phone=_forecast(3))
    assert [(c.where, c.key, c.new) for c in changes] == [(PHONE, "draft_predict_length", 3)]
    assert _recipes(target, draft) == before


def test_best_changes_asks_the_forecast_for_the_chosen_phone(bundle_copy: Copy) -> None:
    target, draft = _phone_pair(bundle_copy)
    tallies = PositionTallies((200, 170, 140, 110, 80, 50), (170, 140, 110, 80, 50, 30), True, 900)
    add_position_tallies(target, draft, tallies)
    expected = pair_forecast(target, draft, PHONE_NAME)
    assert isinstance(expected, PhoneForecast)
    as_run = recipe_defaults(target, draft)
    plan = SweepPlan(draft_lengths=(1, 2, 3, 4), target_threads=(as_run["target_threads"],))
    results = [
        SettingResult(s, setting_result(s.draft_length, 1 + s.draft_length / 10, 0, 0).summary)
        for s in plan.settings()
    ]
    for r in results:
        r.summary.update(uplift_low=r.uplift - 0.01, uplift_high=r.uplift + 0.01)
    run = TuneRun(str(target), str(draft), plan, results=results, as_run=as_run)
    assert refusal_now(run) is None
    phone_profiles.choose_device(PHONE_NAME)
    best = best_changes(run, phone_profiles.chosen_device())
    assert best is not None and best.phone == expected
    on_phone = [c for c in best.changes if c.where == PHONE]
    if expected.best_draft_length != 1:  # the recipe's own length needs no change
        assert [(c.key, c.new) for c in on_phone] == [
            ("draft_predict_length", expected.best_draft_length)
        ]
    assert best.phone_note() == (
        f"Best on the phone ({PHONE_NAME}, by the forecast): d = {expected.best_draft_length}."
    )
    # No phone: nothing for the phone, and the note says how to get a forecast.
    alone = best_changes(run, None)
    assert alone is not None and all(c.where == COMPUTER for c in alone.changes)
    assert "No phone is chosen" in alone.phone_note()


def _run_best(target: Path, draft: Path, best: int) -> TuneRun:
    """A run of d = 1-4 whose best is `best`, measured as the recipes run now."""
    as_run = recipe_defaults(target, draft)
    plan = replace(plan_for("quick", as_run), adaptive=False)
    results = [
        SettingResult(
            s, setting_result(s.draft_length, 2.0 if s.draft_length == best else 1.2, 0, 0).summary
        )
        for s in plan.settings()
    ]
    for r in results:
        r.summary.update(uplift_low=r.uplift - 0.01, uplift_high=r.uplift + 0.01)
    return TuneRun(str(target), str(draft), plan, results=results, as_run=as_run)


def test_the_phone_s_length_is_applied_when_the_best_here_is_the_recipe_already(
    bundle_copy: Copy,
) -> None:
    """The phone recipe says d = 1, which is also best here: Apply Best has nothing to
    do here, but the forecast chose d = 3 for the phone: that alone is written, and this
    computer keeps running d = 1."""
    target, draft = _phone_pair(bundle_copy)
    run = _run_best(target, draft, 1)
    assert refusal_now(run) == "the best (draft length 1) is the current recipe already"
    best, refusal = applicable(run, phone=_forecast(3))
    assert refusal == refusal_now(run)
    assert best is not None and best.phone_only
    assert best.label() == "the phone's draft length 3"
    assert [c.text() for c in best.changes] == [
        "On the phone: fast-target/config.json draft_predict_length 1 → 3 "
        f"(best on {PHONE_NAME} by the forecast)",
        "On this computer: fast-target/config.json draft_predict_length (unset) → 1 "
        "(what runs here now, kept)",
    ]
    snapshot = best.apply()
    assert json.loads((target / "config.json").read_text())["draft_predict_length"] == 3
    assert recipe_defaults(target, draft)["draft_length"] == 1
    restore(snapshot)
    assert json.loads((target / "config.json").read_text())["draft_predict_length"] == 1
    assert not (target / THIS_COMPUTER_FILE).exists()
    # The forecast agrees with the phone's recipe: nothing at all to apply.
    assert applicable(run, phone=_forecast(1)) == (None, refusal_now(run))
    # A run that cannot pay on this MNN sets nothing, the phone's length included.
    blocked = replace(run, cannot_pay="cannot pay")
    assert applicable(blocked, phone=_forecast(3)) == (None, "cannot pay")


def test_tune_refuses_a_phone_it_does_not_know(bundle_copy: Copy) -> None:
    target, draft = _phone_pair(bundle_copy)
    proc = run_cli("tune", "--target", str(target), "--draft", str(draft), "--device", "Nokia 3310")
    assert proc.returncode == 2
    assert "no phone profile named 'Nokia 3310'; known: " in proc.stderr
    assert PHONE_NAME in proc.stderr
