"""The Tune page's sampler choice, offscreen: greedy by default (as `draftdeck tune`),
or a real sweep on the fixture fast pair with the recipe's sampler, its seed shown, and
the saved run reopened as sampled."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.measure.tune_run import TuneRun, runs_dir
from app.ui.shell.main_window import MainWindow
from app.ui.tune.tune_page import TunePage
from tests.helpers.tune_results import tiny_plan
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
OpenTune = Callable[[dict[str, object]], MainWindow]
# The fast target's recipe sampler, as SamplerSettings.describe() says it.
FAST_SAMPLER = "temperature 0.8, topK 40"


@pytest.fixture
def open_tune(qtbot: QtBot, bundle_copy: Copy) -> Iterator[OpenTune]:
    """The main window on the Tune page with the fast pair chosen, the target's recipe
    updated with the given keys first."""
    with ExitStack() as windows:

        def open_with(target_keys: dict[str, object]) -> MainWindow:
            win = windows.enter_context(open_window(qtbot))
            # Run before the window closes: the sweep's thread ends before the next test.
            windows.callback(win.tune_page.queue.shutdown)
            root = add_packs(win, bundle_copy, ("fast-target", "fast-draft"), desktop=True)
            _update_target(root, target_keys)
            win.show_page("pair")
            win.pair_page.choose(root / "fast-target", root / "fast-draft")
            win.show_page("tune")
            return win

        yield open_with


def _update_target(root: Path, keys: dict[str, object]) -> None:
    """Save these keys in the fast target's recipe, as the Recipes page does."""
    config = root / "fast-target" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), **keys}))


def _tiny_plan(page: TunePage) -> None:
    tiny_plan(page.form)


def _modal_boxes() -> list[QMessageBox]:
    return [
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    ]


def test_greedy_is_the_default_and_says_so(open_tune: OpenTune) -> None:
    page = open_tune({}).tune_page
    form = page.form
    assert not form.sample.isChecked() and form.sample.isEnabled()
    assert not form.seed.isEnabled() and not form.temperatures.isEnabled()
    assert form.sampler_note.text() == "Greedy: the most likely token every time."
    plan = form.measured_plan()
    assert (plan.sample, plan.seed, plan.temperatures) == (False, None, ())
    form.sample.setChecked(True)
    assert f"Sampler: {FAST_SAMPLER}" in form.sampler_note.text()
    assert form.seed.isEnabled() and form.temperatures.isEnabled()


def test_a_sampled_sweep_runs_shows_its_seed_and_reopens_as_sampled(
    open_tune: OpenTune, qtbot: QtBot
) -> None:
    page = open_tune({}).tune_page
    _tiny_plan(page)
    page.form.sample.setChecked(True)
    page.form.temperatures.setText("0.3")
    assert "measured, never applied" in page.form.sampler_note.text()
    page.start_button.click()
    job = page.job
    assert job is not None
    # The seed left blank is chosen at Start and shown before any figure.
    assert job.plan.sample and job.plan.seed is not None
    assert job.plan.temperatures == (0.3,)
    shown = page.sampler_label.text()
    assert (
        f"Sampled with the recipe's sampler: {FAST_SAMPLER}" in shown
        and f"seed {job.plan.seed}" in shown
    )
    assert "also at temperature 0.3 (measured, never applied)" in shown
    assert not page.start_button.isEnabled()
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=180_000)
    run = page.run
    assert run is not None and run.plan == job.plan
    sampler_column = page.model.KEYS.index("sampled")
    cells = {page.model.index(r, sampler_column).data() for r in range(page.model.rowCount())}
    assert cells == {"recipe", "temp. 0.3"}
    assert "Temperature 0.3 was measured, not applied" in page.verdict.text()
    assert "sampled" in page.chart.plot.titleLabel.text

    # The saved run (JSON and CSV) says it was sampled, and reopens so.
    saved = sorted(runs_dir().glob("*.json"))[-1]
    assert TuneRun.load(saved).plan.sample
    with saved.with_suffix(".csv").open() as f:
        assert {row["sampled"] for row in csv.DictReader(f)} == {"True"}
    page.sampler_label.clear()
    page.model.set_results([])
    page.open_run(saved)
    assert page.sampler_label.text() == run.sampler_text()
    assert f"seed {job.plan.seed}" in page.sampler_label.text()
    assert page.model.index(0, sampler_column).data() in {"recipe", "temp. 0.3"}
    assert "sampled" in page.chart.plot.titleLabel.text


def test_a_run_saved_before_sampling_reopens_as_greedy(open_tune: OpenTune, qtbot: QtBot) -> None:
    page = open_tune({}).tune_page
    _tiny_plan(page)
    page.start_button.click()
    assert page.job is not None and not page.job.plan.sample  # greedy by default
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=180_000)
    saved = sorted(runs_dir().glob("*.json"))[-1]
    # What an older DraftDeck wrote: no sampling fields in the plan nor the summaries.
    data = json.loads(saved.read_text())
    for key in ("sample", "temperatures", "seed"):
        del data["plan"][key]
    for row in data["results"]:
        row["summary"].pop("sampler")
        row.pop("sampled")
    saved.write_text(json.dumps(data))
    page.open_run(saved)
    assert page.sampler_label.text().startswith("Greedy: the target's most likely token")
    sampler_column = page.model.KEYS.index("sampled")
    assert page.model.index(0, sampler_column).data() == "greedy"
    assert "greedy" in page.chart.plot.titleLabel.text


def test_an_unreadable_sampler_turns_the_box_off_inline(open_tune: OpenTune) -> None:
    page = open_tune({"sampler_type": "nonsense"}).tune_page
    form = page.form
    assert not form.sample.isEnabled() and not form.sample.isChecked()
    assert "Cannot read the sampler of" in form.sample.toolTip()
    assert "config.json" in form.sampler_note.text()
    assert not form.measured_plan().sample
    assert _modal_boxes() == []


def test_a_bad_temperature_is_said_inline_and_nothing_starts(open_tune: OpenTune) -> None:
    page = open_tune({}).tune_page
    page.form.sample.setChecked(True)
    page.form.temperatures.setText("0.5, warm")
    assert "“warm” is not a number" in page.form.sampler_note.text()
    page.start_button.click()
    assert page.job is None
    assert page.verdict.text() == "Not started: “warm” is not a number."
    assert _modal_boxes() == []


def test_the_sampler_column_explains_itself(open_tune: OpenTune) -> None:
    page = open_tune({}).tune_page
    column = page.model.KEYS.index("sampled")
    tip = page.model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "never applied" in tip


def test_a_sampler_edited_elsewhere_shows_when_the_page_comes_back(
    open_tune: OpenTune, qtbot: QtBot
) -> None:
    window = open_tune({})
    page = window.tune_page
    page.form.sample.setChecked(True)
    assert f"Sampler: {FAST_SAMPLER}" in page.form.sampler_note.text()
    window.show_page("recipes")
    _update_target(window.library.root, {"temperature": 0.5})
    window.show_page("tune")
    qtbot.waitUntil(lambda: "temperature 0.5, topK 40" in page.form.sampler_note.text())
    assert page.form.sample.isChecked()


def test_start_plans_with_the_sampler_on_disk(open_tune: OpenTune, qtbot: QtBot) -> None:
    window = open_tune({})
    page = window.tune_page
    _tiny_plan(page)
    page.form.sample.setChecked(True)
    page.form.temperatures.setText("0.5")
    # Saved while the page shows: the recipe's own temperature is now the one typed.
    _update_target(window.library.root, {"temperature": 0.5})
    page.start_button.click()
    job = page.job
    assert job is not None
    assert job.plan.sample and job.plan.temperatures == ()  # 0.5 is the recipe's own
    assert "temperature 0.5, topK 40" in page.sampler_label.text()
    page.cancel()
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=180_000)
