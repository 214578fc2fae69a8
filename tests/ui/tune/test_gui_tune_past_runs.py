"""The Tune page's past-runs bar offscreen: hidden with the rest of the page until a
pair is chosen, a broken saved run said plainly by Open and Compare alike, and a
compared run kept on the chart while the Compare box names it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.measure.tune_run import runs_dir
from app.ui.shell.main_window import MainWindow
from app.ui.tune.tune_chart import UpliftChart
from tests.helpers.tune_results import done_run
from tests.helpers.windows import open_on_page, open_window

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(qtbot, bundle_copy, ("fast-target", "fast-draft"), "tune") as win:
        yield win


def _error_boxes() -> list[QMessageBox]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "errorDialog" and w.isVisible()
    ]


def _legend_labels(chart: UpliftChart) -> list[str]:
    return [label.text for _sample, label in chart.legend.items]


def test_without_a_pair_the_past_runs_bar_is_hidden(qtbot: QtBot, bundle_copy: Copy) -> None:
    with open_window(qtbot) as window:
        tune = window.tune_page
        window.show_page("tune")
        qtbot.waitUntil(lambda: tune.needs_pair.message.isVisible())
        # Open would load into the verdict, table and chart, hidden behind the notice.
        assert not tune.history.isVisible()
        assert not tune.history.open_button.isVisible()


def test_the_past_runs_bar_shows_with_a_pair(window: MainWindow, qtbot: QtBot) -> None:
    tune = window.tune_page
    qtbot.waitUntil(lambda: tune.form.isVisible())
    assert tune.history.isVisible()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"target": "t", "draft": "d", "results": []}, "“plan” is missing"),
        ({"target": "t", "draft": "d", "plan": {}}, "“results” is missing"),
        ({"target": "t", "draft": "d", "plan": 5, "results": [1]}, "the wrong kind of value"),
    ],
)
def test_a_broken_saved_run_is_said_alike_by_open_and_compare(
    window: MainWindow, qtbot: QtBot, content: dict[str, object], problem: str
) -> None:
    page = window.tune_page
    runs_dir().mkdir(parents=True, exist_ok=True)
    broken = runs_dir() / "broken.json"
    broken.write_text(json.dumps(content))
    page.refresh_past()

    page.history.open_button.click()
    qtbot.waitUntil(lambda: len(_error_boxes()) == 1)
    opened = _error_boxes()[0]
    said = opened.text()
    assert opened.windowTitle() == "Cannot open the run"
    assert "not a saved tuning run:" in said and problem in said and str(broken) in said
    opened.close()
    qtbot.waitUntil(lambda: _error_boxes() == [])
    assert page.run is None

    page.history.compare.setCurrentIndex(page.history.compare.findText("broken"))
    qtbot.waitUntil(lambda: len(_error_boxes()) == 1)
    compared = _error_boxes()[0]
    assert (compared.windowTitle(), compared.text()) == (opened.windowTitle(), said)
    # The box names no run the chart does not draw.
    assert page.history.compare.currentText() == "(nothing)"
    compared.close()


def test_a_compared_run_stays_drawn_when_the_results_change(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.tune_page
    runs_dir().mkdir(parents=True, exist_ok=True)
    shown, other = runs_dir() / "shown.json", runs_dir() / "other.json"
    done_run(window.library.root).save(shown)
    done_run(window.library.root).save(other)
    page.refresh_past()
    page.history.compare.setCurrentIndex(page.history.compare.findText("other"))
    assert any("compared" in label for label in _legend_labels(page.chart))
    # Opening a run redraws the results: the run the Compare box names stays beside them.
    page.history.past.setCurrentIndex(page.history.past.findText("shown"))
    page.history.open_button.click()
    assert page.run is not None
    assert page.history.compare.currentText() == "other"
    assert any("compared" in label for label in _legend_labels(page.chart))
    page.history.compare.setCurrentIndex(0)
    assert not any("compared" in label for label in _legend_labels(page.chart))
