"""The Tune page offscreen: why Apply Best is off, beside it; a recipe edited on the
Recipes page seen when Tune comes back; thread counts as they run, said on the form;
a form that stays put when a run starts; and Tune's keys."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.measure.tune_plan import Setting, plan_for, recipe_defaults
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun, runs_dir
from app.core.recipe.desktop_settings import update_desktop
from app.core.recipe.drafting_settings import FIXED_DRAFTING, write_drafting
from app.core.recipe.files import RecipeDocument
from app.core.recipe.schema import physical_cores
from app.ui.shell.main_window import MainWindow
from tests.helpers.tune_results import setting_result, tiny_plan
from tests.helpers.windows import add_packs, open_on_page, open_window

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(qtbot, bundle_copy, ("fast-target", "fast-draft"), "tune") as win:
        yield win


def _saved_run(window: MainWindow, d4_low: float = 1.2) -> Path:
    """A Quick run of the pair as its recipes run (d=3 current at 1.3x); d=4 best at
    1.4x, its interval from `d4_low`."""
    root = window.library.root
    target, draft = root / "fast-target", root / "fast-draft"
    write_drafting(draft, FIXED_DRAFTING)  # as its rows were measured: d=3 is current
    as_run = recipe_defaults(target, draft)
    results = []
    for d, uplift in ((1, 1.1), (2, 1.2), (3, 1.3), (4, 1.4)):
        made = setting_result(d, uplift, uplift - 0.01, uplift + 0.01)
        setting = Setting(
            d,
            as_run["draft_threads"],
            as_run["draft_precision"],
            as_run["draft_memory"],
            as_run["target_threads"],
        )
        results.append(SettingResult(setting, made.summary))
    results[3].summary["uplift_low"] = d4_low
    plan = plan_for("quick", as_run)
    run = TuneRun(str(target), str(draft), plan, results=results, as_run=as_run)
    path = runs_dir() / "made.json"
    run.save(path)
    return path


def test_why_apply_best_is_off_is_beside_it_and_follows_a_recipe_edit(
    window: MainWindow,
) -> None:
    page = window.tune_page
    page.open_run(_saved_run(window))
    note, button = page.apply_bar.note, page.apply_button
    assert not button.isEnabled()
    assert note.text() == (
        "Apply Best is off: the best (draft length 4) is not better than the current "
        "recipe beyond noise: its 95 % interval 1.20\N{EN DASH}1.41\N{MULTIPLICATION SIGN} "
        "starts at or below the 1.30\N{MULTIPLICATION SIGN} the current recipe (draft "
        "length 3) measured."
    )
    # In the page, on the button's row, left of it: no tooltip to hunt for.
    assert note.isVisible() and "beyond noise" not in button.toolTip()
    at_note = note.mapTo(page, QPoint(0, 0))
    at_button = button.mapTo(page, QPoint(0, 0))
    assert at_note.x() + note.width() <= at_button.x()
    assert at_note.y() <= at_button.y() + button.height() // 2 <= at_note.y() + note.height()
    d_column = page.model.KEYS.index("draft_length")
    assert page.model.index(2, d_column).data() == "3 (now)"
    # A recipe edit on the Recipes page: the draft's memory, which the run held as it ran.
    window.show_page("recipes")
    recipe = window.library.root / "fast-draft" / "config_cpu.json"
    doc = RecipeDocument.open_or_new(recipe)
    doc.save({**doc.data, "memory": "low"})
    window.show_page("tune")
    assert note.text().startswith(
        "Apply Best is off: the recipes changed since this run measured them (draft "
        "memory normal → low), so its comparison with the current recipe is stale"
    )
    assert "1.30\N{MULTIPLICATION SIGN}" not in note.text()
    assert "(now)" not in str(page.model.index(2, d_column).data())
    # Back as the run measured it, and the draft length moved to 1: d=4 beats d=1.
    doc = RecipeDocument.open_or_new(recipe)
    doc.save({**doc.data, "memory": "normal"})
    config = window.library.root / "fast-target" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "draft_predict_length": 1}))
    window.show_page("recipes")
    window.show_page("tune")
    assert button.isEnabled(), note.text()
    assert note.text() == (
        "Apply Best writes draft length 4: On this computer: fast-target/config.json "
        "draft_predict_length 1 → 4 (measured here)."
    )
    assert page.model.index(0, d_column).data() == "1 (now)"


def test_a_stopped_run_and_its_apply_line_word_its_interval_alike(window: MainWindow) -> None:
    """A run cancelled after four pairs of its best: its interval holds 87.5 %, not 95 %.
    The verdict said "88% interval (too few pairs for 95 %) 0.70-0.97x" while the Apply
    line beside it said "its 95 % interval starts at 0.70x"; both say it one way now, and
    the table's cell gives the level too."""
    path = _saved_run(window, d4_low=0.7)
    run = TuneRun.load(path)
    best = run.results[3]
    best.summary.update(
        uplift=0.9, uplift_high=0.97, uplift_interval_level=0.875, pair_ratios=[0.7, 0.9, 0.9, 0.97]
    )
    for other in run.results[:3]:
        other.summary.update(uplift=0.5, uplift_low=0.45, uplift_high=0.55)
    run.cancelled = True
    run.save(path)
    page = window.tune_page
    page.open_run(path)
    said = "87 % interval 0.70\N{EN DASH}0.97\N{MULTIPLICATION SIGN}"
    assert said in page.verdict.text()
    assert f"its {said} is not above 1" in page.apply_bar.note.text()
    assert "95 %" not in page.verdict.text().split("Best:")[1].split(")")[0]
    assert "95 %" not in page.apply_bar.note.text()
    interval = page.model.index(3, page.model.KEYS.index("uplift_interval"))
    assert interval.data() == "0.70-0.97x (87 %)"
    assert str(interval.data(Qt.ItemDataRole.ToolTipRole)).startswith(said)


def test_the_form_follows_the_recipes_wherever_they_are_saved(
    window: MainWindow, qtbot: QtBot
) -> None:
    """After the TokForge preset was saved on the Recipes page (draft thread_num 2), the
    form still said "Draft threads 1 to 1" until Quick was pressed: Start would have
    measured what no longer runs. Now it follows at once, the Tune page unseen, and so for
    a file a command writes; what the user chose (a swept range, the tokens) stays."""
    page, root = window.tune_page, window.library.root
    form = page.form
    target, draft = root / "fast-target", root / "fast-draft"
    was = recipe_defaults(target, draft)
    assert (form.dt_min.value(), form.dt_max.value()) == (was["draft_threads"],) * 2 == (1, 1)
    form.tokens.setValue(32)
    window.show_page("recipes")
    recipes = window.recipes_page
    names = [recipes.preset_combo.itemText(i) for i in range(recipes.preset_combo.count())]
    recipes.preset_combo.setCurrentIndex(names.index("TokForge published recipe (phone)"))
    recipes.act_preset.trigger()
    recipes.act_save.trigger()
    now = recipe_defaults(target, draft)
    assert now["draft_threads"] == 2 and now["draft_memory"] != was["draft_memory"]
    qtbot.waitUntil(lambda: (form.dt_min.value(), form.dt_max.value()) == (2, 2))
    assert not page.isVisible()  # heard while another page was shown, without Quick
    assert (form.tt_min.value(), form.tt_max.value()) == (now["target_threads"],) * 2
    memories = {name for name, box in form.memories.items() if box.isChecked()}
    assert memories == {now["draft_memory"]}
    assert (form.d_min.value(), form.d_max.value()) == (1, 4)  # swept: the user's, kept
    assert form.tokens.value() == 32
    # A command writes this computer's settings; the user has widened the target's
    # threads meanwhile: the draft's follow, the widened range stays.
    window.show_page("tune")
    form.tt_min.setValue(1)
    form.tt_max.setValue(2)
    update_desktop(draft, "config_cpu.json", {"thread_num": 1})
    qtbot.waitUntil(lambda: (form.dt_min.value(), form.dt_max.value()) == (1, 1))
    assert (form.tt_min.value(), form.tt_max.value()) == (1, 2)
    assert form.current_plan().draft_threads == (recipe_defaults(target, draft)["draft_threads"],)


def test_capped_and_over_core_thread_counts_are_said_on_the_form(
    qtbot: QtBot, bundle_copy: Copy
) -> None:
    cores = physical_cores()
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, ("fast-target", "fast-draft"), desktop=True)
        for path in (root / "fast-target" / "config.json", root / "fast-draft" / "config_cpu.json"):
            path.write_text(json.dumps({**json.loads(path.read_text()), "thread_num": cores + 2}))
        window.show_page("pair")
        window.pair_page.choose(root / "fast-target", root / "fast-draft")
        window.show_page("tune")
        form = window.tune_page.form
        assert form.threads_note.isVisible()
        text = form.threads_note.text()
        assert (
            f"Target threads: config.json asks for {cores + 2}; this computer has {cores}" in text
        )
        assert f"Draft threads: config_cpu.json asks for {cores + 2}, more than" in text
        # The form holds what is measured as the current recipe: as the engine runs it.
        assert (form.tt_min.value(), form.tt_max.value()) == (cores, cores)
        assert (form.dt_min.value(), form.dt_max.value()) == (cores + 2, cores + 2)
        plan = form.current_plan()
        assert (plan.target_threads, plan.draft_threads) == ((cores,), (cores + 2,))


def test_greedy_wording_follows_the_recipe(window: MainWindow) -> None:
    page = window.tune_page
    # The desktop recipes keep memory normal: exact.
    assert "must equal plain output" in page.sampler_label.text()
    config = window.library.root / "fast-target" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "memory": "low"}))
    window.show_page("recipes")
    window.show_page("tune")
    text = page.sampler_label.text()
    assert "must equal" not in text and "only when the recipe verifies exactly" in text


def test_the_form_stays_put_when_a_run_starts_and_the_keys_work(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.tune_page
    # A fresh page: no verdict yet, nothing measured (once its texts appeared at Start,
    # and the time left wrapped into three lines, and the form moved down).
    form_top = page.form.mapTo(page, QPoint(0, 0)).y()
    tiny_plan(page.form)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    page.form.prompts.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is page.form.prompts)
    QTest.keyClick(page.form.prompts, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert page.job is not None  # Ctrl+Return is Start
    assert page.form.prompts.toPlainText() == "Tell me about rivers."  # no newline typed
    line = page.eta_label.fontMetrics().lineSpacing()
    qtbot.waitUntil(lambda: page.eta_label.text().startswith("about"), timeout=120_000)
    assert page.eta_label.height() < 2 * line  # one line, never three
    assert page.form.mapTo(page, QPoint(0, 0)).y() == form_top
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=180_000)
    # Again with a two-line verdict shown: Start's shorter "Measuring…" keeps its room.
    page.open_run(_saved_run(window))
    form_top = page.form.mapTo(page, QPoint(0, 0)).y()
    page.start_button.click()
    qtbot.waitUntil(lambda: page.eta_label.text().startswith("about"), timeout=120_000)
    assert page.form.mapTo(page, QPoint(0, 0)).y() == form_top
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=180_000)
    # Apply Best's key opens its question when it is on.
    page.open_run(_saved_run(window, d4_low=1.35))
    assert page.apply_button.isEnabled(), page.apply_bar.note.text()
    QTest.keyClick(
        page, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    box = page.confirm_box
    assert box is not None and "Apply draft length 4?" in box.text()
    box.reject()
