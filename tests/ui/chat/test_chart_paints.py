"""What a streaming reply's charts cost the GUI thread: one update of a plot is one paint.

A plot whose range follows its data used to fit it only while being painted; the new
range dirtied the plot again, so every update painted it twice (2-3 ms a paint in
software rendering, four plots ten times a second while a reply streams)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

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
