"""The Tune page offscreen with adaptive drafting measured beside the fixed lengths: its
row in the table and its point in the chart said apart, Quick turning it on in the form,
and Apply Best turning it on in the draft pack, listed first and undone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.measure.tune_plan import plan_for, recipe_defaults
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun, runs_dir
from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.ui.shell.main_window import MainWindow
from tests.helpers.tune_results import setting_result
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    def fixed_drafting(library: Path) -> None:
        write_drafting(library / "fast-draft", DraftingSettings(adaptive=False, stop_below=0.3))

    with open_on_page(
        qtbot, bundle_copy, ("fast-target", "fast-draft"), "tune", prepare=fixed_drafting
    ) as win:
        yield win


def _saved_run(window: MainWindow) -> Path:
    """A Quick run of the pair as it runs: d=1-4 fixed, adaptive drafting up to 4 clearly
    best (2.0x, against 1.4x at most)."""
    root = window.library.root
    target, draft = root / "fast-target", root / "fast-draft"
    as_run = recipe_defaults(target, draft)
    plan = plan_for("quick", as_run)
    results = []
    for setting in plan.settings():
        uplift = 2.0 if setting.adaptive else 1.0 + setting.draft_length / 10
        made = setting_result(setting.draft_length, uplift, uplift - 0.01, uplift + 0.01)
        results.append(SettingResult(setting, made.summary))
    path = runs_dir() / "adaptive.json"
    TuneRun(str(target), str(draft), plan, results=results, as_run=as_run).save(path)
    return path


def test_quick_measures_adaptive_drafting_and_the_box_turns_it_off(window: MainWindow) -> None:
    form = window.tune_page.form
    assert form.adaptive.isChecked() and form.current_plan().adaptive
    assert [s.adaptive for s in form.current_plan().settings()] == [False] * 4 + [True]
    form.adaptive.setChecked(False)
    assert len(form.current_plan().settings()) == 4
    window.tune_page.use_preset("quick")
    assert form.adaptive.isChecked()


def test_the_adaptive_row_is_said_apart_and_apply_turns_it_on(window: MainWindow) -> None:
    page = window.tune_page
    draft = window.library.root / "fast-draft"
    page.open_run(_saved_run(window))
    model = page.model
    drafting = model.KEYS.index("adaptive")
    d = model.KEYS.index("draft_length")
    assert not page.table.isColumnHidden(drafting)
    assert model.headerData(drafting, Qt.Orientation.Horizontal) == "Drafting"
    assert [model.index(r, drafting).data() for r in range(5)] == ["fixed"] * 4 + ["adaptive"]
    assert model.index(4, d).data() == "4"
    assert model.index(4, d).data(Qt.ItemDataRole.ToolTipRole) == (
        "Adaptive drafting: up to 4 tokens a round"
    )
    assert model.index(4, 0).data(Qt.ItemDataRole.FontRole).bold()  # the best
    # The chart: the fixed lengths' line and adaptive drafting's own point, named apart.
    names = [label.text for _, label in page.chart.legend.items]
    assert names == [
        "draft 1 thread, target 1 thread",
        "adaptive, draft 1 thread, target 1 thread",
    ]
    assert page.verdict.text().startswith(
        "adaptive: Best: adaptive drafting up to 4, draft 1 thread"
    )
    # Apply Best says what it writes, the drafting file included, and writes it on consent.
    change = "On this computer: fast-draft/.draftdeck-drafting.json adaptive off → on"
    assert page.apply_button.isEnabled(), page.apply_bar.note.text()
    assert page.apply_bar.note.text().startswith("Apply Best writes adaptive drafting up to 4:")
    assert change in page.apply_bar.note.text()
    page.apply_button.click()
    box = page.confirm_box
    assert change in box.text() and read_drafting(draft).adaptive is False
    next(b for b in box.buttons() if b.text() == "Apply").click()
    assert read_drafting(draft) == DraftingSettings(adaptive=True, stop_below=0.3)
    assert "a phone drafts the full length" in page.apply_bar.note.text()
    page.undo_button.click()
    assert read_drafting(draft) == DraftingSettings(adaptive=False, stop_below=0.3)
    assert (draft / DRAFTING_FILE).is_file()
    assert page.apply_button.isEnabled()
