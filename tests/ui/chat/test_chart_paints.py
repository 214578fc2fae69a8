"""What a streaming reply's charts cost the GUI thread: one update of a plot is one
paint, and the time axis (whose labels are most of a paint) keeps still between most.

A plot whose range follows its data used to fit it only while being painted; the new
range dirtied the plot again, so every update painted it twice (2-3 ms a paint in
software rendering, four plots ten times a second while a reply streams)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.ui.chat.chart_time import time_window
from app.ui.chat.chat_charts import ChatCharts
from tests.helpers.engine_events import rounds_event


class PaintCount(QObject):
    """Paint events `widget` received since the count was last set to 0."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _deliver_everything() -> None:
    """Every event Qt has queued, and those they queue (a paint that dirtied its plot
    again queues the next paint): no timer is involved, so a few passes empty it."""
    for _ in range(10):
        QApplication.processEvents()


def test_one_update_of_a_plot_is_one_paint(qtbot: QtBot) -> None:
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.resize(600, 500)
    charts.show()
    qtbot.waitExposed(charts)
    paints = [PaintCount(plot.viewport()) for plot in charts.plots()]
    charts.start_reply()

    def batch(step: int) -> None:
        # 100 tok/s and the same acceptance every batch: the axes' labels keep their
        # widths (a wider label re-lays the plot out, a paint of its own), while the
        # time axis grows, so every plot that follows its data has a new range.
        charts.add_rounds(rounds_event(0.1 * step, [1] * 10, [(4, 3, 3), (4, 3, 3), (2, 1, 3)]))

    for step in range(1, 5):
        batch(step)
        charts.redraw()
        _deliver_everything()
    for step in range(5, 9):
        batch(step)
        for paint in paints:
            paint.count = 0
        charts.redraw()
        _deliver_everything()
        assert [paint.count for paint in paints] == [1, 1, 1, 1], step


def test_the_time_axis_moves_only_when_the_data_leaves_it() -> None:
    # A quarter ahead of the data, kept while the data stays inside and fills two thirds.
    assert time_window((0.0, 1.0), 0.2, 0.4) == (0.0, 1.0)
    assert time_window((0.0, 1.0), 0.2, 1.2) == (0.2, 0.2 + 1.25)
    assert time_window((0.2, 1.45), 0.2, 1.4) == (0.2, 1.45)
    assert time_window((0.0, 100.0), 0.0, 10.0) == (0.0, 12.5)  # the data shrank (Regenerate)
    assert time_window((0.0, 12.5), 3.0, 12.0) == (0.0, 12.5)  # older samples dropped
    assert time_window((0.0, 12.5), 5.0, 12.4) == (5.0, 5.0 + 7.4 * 1.25)


def test_the_charts_time_axis_keeps_still_between_most_updates(qtbot: QtBot) -> None:
    """Each move lays the axis out and draws its labels anew (most of a plot's paint):
    fitted at every update, it moved ten times a second."""
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.start_reply()
    shown = []
    for step in range(1, 101):  # ten seconds of a reply, a batch every 0.1 s
        charts.add_rounds(rounds_event(0.1 * step, [1] * 10, [(4, 3, 3), (4, 3, 3), (2, 1, 3)]))
        charts.redraw()
        low, high = charts.speed_plot.viewRange()[0]
        assert low <= 0.1 * step <= high  # the newest batch is on screen
        shown.append((low, high))
    for plot in (charts.acceptance_plot, charts.length_plot):
        assert tuple(plot.viewRange()[0]) == shown[-1]  # one axis for the three
    assert len(set(shown)) <= 15
