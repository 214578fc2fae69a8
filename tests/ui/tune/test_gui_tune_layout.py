"""The Tune page's layout at the sizes a user has: the chart within its pane, caps of
a sensible width, readable table headers, the table's rows in view, a plain verdict."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QStyle
from pytestqt.qtbot import QtBot

from app.core.measure.tune_plan import SweepPlan
from app.core.measure.tune_run import runs_dir
from app.engine.client.tune_job import FINISHED
from app.ui.base.verdict_label import first_sentence
from app.ui.shell.main_window import MainWindow
from app.ui.tune.tune_chart import CAP_WIDTH, UpliftChart
from app.ui.tune.tune_page import TunePage
from tests.helpers.tune_results import done_run, setting_result
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]
SIZES = [(1024, 700), (1600, 1000)]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(qtbot, bundle_copy, ("fast-target", "fast-draft"), "tune") as win:
        yield win


def _open(window: MainWindow, qtbot: QtBot, size: tuple[int, int]) -> TunePage:
    page = window.tune_page
    path = runs_dir() / "done.json"
    done_run(window.library.root).save(path)
    window.resize(*size)
    qtbot.waitUntil(lambda: window.size().width() == size[0])
    page.refresh_past()
    page.open_run(path)
    # Laid out: the verdict's wrapped line as tall as it needs.
    shown = page.verdict.shown
    qtbot.waitUntil(lambda: shown.height() >= shown.heightForWidth(shown.width()))
    qtbot.waitUntil(lambda: _legend_below(page.chart))
    _grab(window, f"done-{size[0]}")
    return page


def _grab(window: MainWindow, name: str) -> None:
    """To look at: set TUNE_LAYOUT_GRABS to a folder."""
    folder = os.environ.get("TUNE_LAYOUT_GRABS")
    if folder:
        window.grab().save(str(Path(folder) / f"{name}.png"))


def _legend_below(chart: UpliftChart) -> bool:
    top: float = chart.legend.sceneBoundingRect().top()
    bottom: float = chart.plot.sceneBoundingRect().bottom()
    return top >= bottom


def _plot_in_pane(qtbot: QtBot, chart: UpliftChart) -> None:
    """The plot, its title and the legend lie within the canvas's viewport, the legend
    under the plot (not over its title)."""
    qtbot.waitUntil(lambda: _legend_below(chart))
    width = chart.canvas.viewport().width()
    for item in (chart.plot, chart.legend, chart.key):
        assert item.sceneBoundingRect().right() <= width
    # Every drawn draft length has room beside it, inside the x range.
    (x_low, x_high), _ = chart.plot.viewRange()
    for item in chart.plot.listDataItems():
        xs = item.getData()[0]
        assert x_low + 0.4 <= min(xs) and max(xs) <= x_high - 0.4


@pytest.mark.parametrize("size", SIZES)
def test_the_chart_fits_its_pane(window: MainWindow, qtbot: QtBot, size: tuple[int, int]) -> None:
    page = _open(window, qtbot, size)
    _plot_in_pane(qtbot, page.chart)
    assert "95 %" not in page.chart.plot.titleLabel.text  # said under the legend
    assert "95 % interval" in page.chart.key.text
    # A compared run's longer legend does not push the plot out either.
    page.results.compare(done_run(window.library.root))
    qtbot.waitUntil(lambda: page.chart.canvas.width() >= page.chart.canvas.minimumWidth())
    _plot_in_pane(qtbot, page.chart)


@pytest.mark.parametrize("points", [1, 2, 4])
def test_error_bar_caps_are_a_fraction_of_a_step(qtbot: QtBot, points: int) -> None:
    chart = UpliftChart()
    qtbot.addWidget(chart)
    chart.resize(500, 330)
    chart.show()
    chart.draw([setting_result(d, 1.6, 1.1, 2.4) for d in range(1, points + 1)])
    (x_low, x_high), _ = chart.plot.viewRange()
    assert x_high - x_low == pytest.approx(points)  # half a step beside each end
    bars = [i for i in chart.plot.items if type(i).__name__ == "ErrorBarItem"]
    assert len(bars) == 1
    # From the first cap's left end to the last's right: the points, and one cap.
    assert bars[0].boundingRect().width() == pytest.approx(points - 1 + CAP_WIDTH)
    # So a cap is at most a fifth of the plot, even for a single point.
    assert CAP_WIDTH / (x_high - x_low) <= 0.2


def test_target_thread_variants_are_told_apart(qtbot: QtBot) -> None:
    """A sweep of the target's threads: points at one draft length sat on one spot and
    the legend named only the draft's threads. Now a line per draft and target thread
    count, each its own colour and place beside the length, its marker by the target's
    threads, the legend naming both; adaptive drafting keeps its line's colour."""
    chart = UpliftChart()
    qtbot.addWidget(chart)
    results = []
    for target in (1, 2):
        for d in (1, 2):
            made = setting_result(d, 1.2 + 0.1 * target, 1.1, 1.6)
            made.setting = replace(made.setting, target_threads=target)
            results.append(made)
    adaptive = setting_result(2, 1.4, 1.2, 1.6)
    adaptive.setting = replace(adaptive.setting, target_threads=2, adaptive=True)
    chart.draw([*results, adaptive], lengths=(1, 2))
    names = [label.text for _sample, label in chart.legend.items]
    assert names == [
        "draft 1 thread, target 1 thread",
        "draft 1 thread, target 2 threads",
        "adaptive, draft 1 thread, target 2 threads",
    ]
    one, two, star = chart.plot.listDataItems()
    xs_one, xs_two = list(one.getData()[0]), list(two.getData()[0])
    assert xs_one[0] < 1 < xs_two[0] and xs_one[1] < 2 < xs_two[1]  # side by side
    assert max(abs(x - d) for x, d in zip(xs_one + xs_two, (1, 2, 1, 2), strict=True)) <= 0.1
    assert star.getData()[0][0] > xs_two[1]  # adaptive: right of its line at the cap
    colours = [item.opts["pen"].color().name() for item in (one, two, star)]
    assert colours[0] != colours[1] and colours[1] == colours[2]
    assert [item.opts["symbol"] for item in (one, two, star)] == ["o", "s", "star"]
    # The legend stacks its names: in two columns they made the chart 531 px at least
    # and the window 1067 px wide, past the 1024 it must fit.
    assert chart.canvas.minimumWidth() <= 360


def test_mid_sweep_the_plans_lengths_stay_in_view(qtbot: QtBot) -> None:
    """One result of a four-length plan: the axis spans the plan, and the points to come
    do not rescale it."""
    chart = UpliftChart()
    qtbot.addWidget(chart)
    chart.draw([setting_result(1, 1.6, 1.1, 2.4)], lengths=(1, 2, 3, 4))
    assert chart.plot.viewRange()[0] == pytest.approx([0.5, 4.5])


@pytest.mark.parametrize("size", SIZES)
def test_headers_read_whole_and_rows_are_in_view(
    window: MainWindow, qtbot: QtBot, size: tuple[int, int]
) -> None:
    page = _open(window, qtbot, size)
    table, model = page.table, page.model
    header = table.horizontalHeader()
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    for column in range(model.columnCount()):
        if table.isColumnHidden(column):  # the same in every row: said in the notes
            continue
        # No header cut (its lines fit between the margins), nor any figure.
        words = header.fontMetrics().size(0, model.COLUMNS[column]).width() + 2 * margin
        assert table.columnWidth(column) >= words, model.COLUMNS[column]
        assert table.columnWidth(column) >= table.sizeHintForColumn(column)
        tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert len(str(tip)) > len(model.COLUMNS[column])  # the full meaning
    # All four rows in view, none scrolled away under the verdict.
    qtbot.waitUntil(lambda: table.verticalScrollBar().maximum() == 0)
    last = table.rowViewportPosition(3) + table.rowHeight(3)
    assert 0 < last <= table.viewport().height()
    # The frozen first column still stands over the table's.
    assert table.frozen.isVisible() and table.frozen.columnWidth(0) == table.columnWidth(0)


def _headers_fit(page: TunePage) -> list[str]:
    """The shown headers cut below their words with no tooltip to read them whole."""
    table, model = page.table, page.model
    header = table.horizontalHeader()
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    cut = []
    for column in range(model.columnCount()):
        if table.isColumnHidden(column):
            continue
        text = model.COLUMNS[column]
        words = header.fontMetrics().size(0, text).width() + 2 * margin
        tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        fits = table.columnWidth(column) >= words
        if not fits and len(str(tip or "")) <= len(text):
            cut.append(text)
        elif not fits or table.columnWidth(column) < table.sizeHintForColumn(column):
            cut.append(text)  # no column here gives way below its header's words
    return cut


def test_headers_fit_when_a_sweep_shows_columns_an_opened_run_hid(
    window: MainWindow, qtbot: QtBot
) -> None:
    """An opened Quick run hides the settings the same in every row; Start empties the
    table and shows them all again: they were measured while hidden (Qt sizes a hidden
    header 0) and squeezed to "afti", "Draf reac", "ecisi", "emo". Then a first row of
    a sweep that varies the threads, with its own columns hidden again."""
    page = _open(window, qtbot, (1024, 700))
    model = page.model
    assert page.table.isColumnHidden(model.KEYS.index("adaptive"))
    page.results.show_results([], SweepPlan(draft_threads=(1, 2), target_threads=(1, 2)))
    _grab(window, "started-1024")
    assert not page.table.isColumnHidden(model.KEYS.index("adaptive"))
    assert _headers_fit(page) == []
    first = [setting_result(1, 1.2, 1.1, 1.3), setting_result(1, 1.3, 1.2, 1.4)]
    first[1].setting = replace(first[1].setting, draft_threads=2, target_threads=2)
    page.results.show_results(first, SweepPlan(draft_threads=(1, 2), target_threads=(1, 2)))
    assert not page.table.isColumnHidden(model.KEYS.index("target_threads"))
    assert _headers_fit(page) == []


def test_uplift_interval_and_pairs_fit_at_1024(window: MainWindow, qtbot: QtBot) -> None:
    """A Quick sweep varies only the draft length: the setting columns the same in every
    row are hidden and said once, so the 95 % interval and Pairs columns are in view
    without scrolling sideways (a reviewer found them cut at 1024 px)."""
    page = _open(window, qtbot, (1024, 700))
    table, model = page.table, page.model
    hidden = [model.KEYS[c] for c in range(model.columnCount()) if table.isColumnHidden(c)]
    assert hidden == [
        "adaptive",
        "draft_threads",
        "draft_precision",
        "draft_memory",
        "target_threads",
        "sampled",
        "phone_uplift",  # no forecast for the phone yet: nothing to show in it
    ]
    assert table.horizontalScrollBar().value() == 0
    for key in ("uplift", "uplift_interval", "pairs"):
        column = model.KEYS.index(key)
        right = table.columnViewportPosition(column) + table.columnWidth(column)
        assert 0 < right <= table.viewport().width(), key
    tip = model.headerData(0, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert str(tip).endswith(
        ". Same in every row (columns hidden): draft 1 thread, low precision, normal memory, "
        "target 1 thread, sampler greedy, fixed drafting"
    )
    # A sweep that varies the draft's threads shows that column again.
    varied = [setting_result(1, 1.2, 1.1, 1.3), setting_result(2, 1.3, 1.2, 1.4)]
    varied[1].setting = replace(varied[1].setting, draft_threads=2)
    page.results.show_results(varied, SweepPlan(draft_lengths=(1, 2)))
    assert not table.isColumnHidden(model.KEYS.index("draft_threads"))
    assert table.isColumnHidden(model.KEYS.index("draft_memory"))


def test_marks_in_the_table_are_explained(window: MainWindow, qtbot: QtBot) -> None:
    page = _open(window, qtbot, (1024, 700))
    model = page.model

    def cell(row: int, key: str, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        return model.index(row, model.KEYS.index(key)).data(role)

    assert cell(0, "uplift_interval") == "1.00-1.77x*"
    assert cell(0, "pairs") == "6" and cell(2, "pairs") == "6 (redone)"
    unmet = "did not get as narrow as the target within the time"
    interval = model.KEYS.index("uplift_interval")
    tip = model.headerData(interval, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert f"*: the interval {unmet}" in str(tip)
    assert unmet in str(cell(0, "uplift_interval", Qt.ItemDataRole.ToolTipRole))
    assert "measured again" in str(cell(2, "pairs", Qt.ItemDataRole.ToolTipRole))
    notes = page.results.notes
    assert (
        notes.isVisible() and unmet in notes.text() and "(redone): measured again" in notes.text()
    )
    # Rows without marks: no notes.
    page.results.show_results(done_run(window.library.root).results[1:2], SweepPlan())
    assert not notes.isVisible()


def test_the_verdict_reads_plainly_and_shows_its_first_sentence(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = _open(window, qtbot, (1024, 700))
    whole = page.verdict.text()
    assert whole.startswith(
        "done: Best: draft length 3, draft 1 thread, low precision, normal memory; target "
        "1 thread: 2.22\N{MULTIPLICATION SIGN} plain decoding "
        "(95 % interval 1.02\N{EN DASH}3.62\N{MULTIPLICATION SIGN}, above 1: speculation "
        "pays off)."
    )
    headline, rest = first_sentence(whole)
    assert headline.endswith("pays off).") and rest.startswith("Acceptance 0.96.")
    assert page.verdict.shown.text() == headline and page.verdict.shown.toolTip() == whole
    assert page.verdict.more.isVisible()
    page.verdict.more.click()
    assert page.verdict.shown.text() == whole and page.verdict.more.text() == "Less"
    page.verdict.more.click()
    assert page.verdict.shown.text() == headline


def test_a_sweep_of_one_result_keeps_short_caps(window: MainWindow, qtbot: QtBot) -> None:
    """A real sweep of one draft length: its chart's x range still spans a step."""
    page = window.tune_page
    window.resize(1024, 700)
    page.form.d_min.setValue(1)
    page.form.d_max.setValue(1)
    page.form.adaptive.setChecked(False)
    page.form.tokens.setValue(16)
    page.form.min_run.setValue(0.05)
    page.form.budget.setValue(1)
    page.form.prompts.setPlainText("Tell me about rivers.")
    page.start_button.click()
    job = page.job
    assert job is not None
    qtbot.waitUntil(lambda: job.status().state in FINISHED, timeout=180_000)
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=10_000)
    assert page.model.row_total() == 1
    _grab(window, "sweep-1024")
    (x_low, x_high), _ = page.chart.plot.viewRange()
    assert (x_low, x_high) == pytest.approx((0.5, 1.5))
    _plot_in_pane(qtbot, page.chart)
    assert page.table.frozen.mapTo(page.table, QPoint(0, 0)).x() <= page.table.frameWidth()
