"""The Chat page's header, figures and charts fit the window and say what they mean:
real widgets offscreen, the real engine worker on the fixture bundles."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.ui.base.engine_bridge import ERROR
from app.ui.base.labels import wrap_to_width
from app.ui.chat.chart_words import REFERENCE_WORDS
from app.ui.chat.chat_charts import ChatCharts
from app.ui.chat.chat_header import INEXACT_VERIFY_NOTE, INEXACT_VERIFY_TIP, plain_default_note
from app.ui.chat.chat_mode import ModeChoice
from app.ui.chat.chat_notes import NotesStrip
from app.ui.chat.chat_sampling import GREEDY_INDEX
from app.ui.shell.main_window import MainWindow
from tests.helpers.engine_events import rounds_event
from tests.helpers.windows import chat_window, open_on_page, send

Copy = Callable[..., Path]
SCREEN_WIDTH = 1024
PAIR = ("qwen3-target", "qwen3-draft-noisy")


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """Desktop recipes: memory normal, so the verify is exact."""
    with chat_window(qtbot, bundle_copy, PAIR, greedy=False) as win:
        yield win


@pytest.fixture
def low_memory_window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The fixtures' own recipes: memory low."""
    with chat_window(qtbot, bundle_copy, PAIR, desktop=False, greedy=False) as win:
        yield win


def test_a_blocked_pair_never_widens_the_window(qtbot: QtBot, bundle_copy: Copy) -> None:
    blocked = ("qwen3-target", "qwen35-draft")  # a Qwen3.5 draft for a Qwen3 target
    with open_on_page(qtbot, bundle_copy, blocked, "chat") as window:
        qtbot.waitUntil(lambda: window.chat_page.bridge.state == ERROR, timeout=30_000)
        page = window.chat_page
        label = page.state_label
        # The whole reason is there, in the label's text and in its tooltip...
        assert "cannot work" in label.text() and "vocabularies" in label.text()
        assert "vocabularies" in label.toolTip()
        # ...and, however long, it leaves the window within a 1024 px screen.
        qtbot.waitUntil(lambda: window.minimumSizeHint().width() <= SCREEN_WIDTH)
        assert page.minimumSizeHint().width() < SCREEN_WIDTH
        # The header stays one line high, above a page that keeps its room.
        assert label.height() < 2 * label.fontMetrics().lineSpacing()


def test_a_reply_shows_its_time_to_first_token_and_prefill_rate(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.sampling.choice.setCurrentIndex(GREEDY_INDEX)
    page.max_tokens.setValue(20)
    send(qtbot, window, "Tell me about lighthouses.")
    stats = page.transcript.messages[-1].stats
    assert stats is not None and stats["prefill_fed"] > 0
    ttft = f"TTFT {stats['prefill_seconds'] * 1000:.0f} ms"
    rate = f"prefill {stats['prefill_fed'] / stats['prefill_seconds']:.0f} tok/s"
    assert f"{ttft} · {rate}" in page.transcript.toPlainText()
    # memory: normal verifies exactly: nothing to warn about.
    assert INEXACT_VERIFY_NOTE not in page.pair_label.text()


def test_a_memory_low_pair_says_its_output_may_differ_from_plain(
    low_memory_window: MainWindow, qtbot: QtBot
) -> None:
    page = low_memory_window.chat_page
    assert INEXACT_VERIFY_NOTE in page.pair_label.text()
    assert INEXACT_VERIFY_TIP in page.pair_label.toolTip()


# -- the charts alone -----------------------------------------------------------------------


@pytest.fixture
def charts(qtbot: QtBot) -> ChatCharts:
    made = ChatCharts()
    qtbot.addWidget(made)
    made.resize(400, 500)
    made.show()
    return made


def test_draft_positions_are_whole_numbers(charts: ChatCharts) -> None:
    charts.add_rounds(rounds_event(0.1, [1] * 7, [(4, 3, 3), (1, 0, 3), (2, 1, 3)]))
    charts.redraw()
    axis = charts.position_plot.getAxis("bottom")
    image = QImage(400, 100, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)  # what the axis draws
    finally:
        painter.end()
    assert specs is not None
    assert [text for _, _, text in specs[2]] == ["1", "2", "3"]


def test_mean_accepted_length_runs_from_zero_to_a_full_round(charts: ChatCharts) -> None:
    charts.add_rounds(rounds_event(0.1, [1] * 3, [(1, 0, 0)] * 3))  # plain decoding
    charts.redraw()
    low, high = charts.length_plot.getViewBox().viewRange()[1]
    assert low == 0 and 1 < high < 2
    charts.add_rounds(rounds_event(0.2, [1] * 4, [(4, 3, 3)]))  # a draft of 3
    charts.redraw()
    low, high = charts.length_plot.getViewBox().viewRange()[1]
    assert low == 0 and 4 < high < 5


def test_time_is_in_seconds_on_every_axis(charts: ChatCharts) -> None:
    # A short reply once showed ms and a longer chat s: one unit, always.
    charts.add_rounds(rounds_event(0.02, [1, 1], [(1, 0, 0)]))
    charts.add_rounds(rounds_event(0.04, [1, 1], [(1, 0, 0)]))
    charts.redraw()
    for plot in (charts.speed_plot, charts.acceptance_plot, charts.length_plot):
        axis = plot.getAxis("bottom")
        assert axis.labelText == "time (s)" and not axis.autoSIPrefix


def test_reference_label_stays_inside_the_plot(charts: ChatCharts, qtbot: QtBot) -> None:
    """The dashed line's words are the speed plot's key, in its title: whole, at the
    width a 1024 px window gives the charts as at a wide one, and never over the curve
    (on the line they covered it, or ran off the plot: "ain decoding")."""
    charts.add_rounds(rounds_event(0.1, [1, 1], [(1, 0, 0)]))
    charts.add_rounds(rounds_event(0.3, [1] * 8, [(4, 3, 3), (4, 3, 3)]))
    charts.set_reference(20.0)
    charts.redraw()
    item = charts.speed_plot.getPlotItem()
    title = item.titleLabel
    assert REFERENCE_WORDS in title.text and charts.reference_line.isVisible()
    plot = charts.speed_plot
    for width in (250, 700):
        charts.resize(width, 700)
        qtbot.waitUntil(lambda: plot.width() <= charts.width() and title.item.isVisible())
        words = title.item.mapRectToScene(title.item.boundingRect())
        assert words.left() >= 0 and words.right() <= plot.width()  # all of it shows
        assert not words.intersects(charts.speed_plot.getViewBox().sceneBoundingRect())
    charts.set_reference(None)
    charts.redraw()
    assert REFERENCE_WORDS not in title.text and not charts.reference_line.isVisible()


def test_plots_stack_when_two_abreast_would_clip(charts: ChatCharts, qtbot: QtBot) -> None:
    charts.resize(300, 700)
    qtbot.waitUntil(lambda: charts.columns == 1)
    charts.resize(900, 700)
    qtbot.waitUntil(lambda: charts.columns == 2)


def test_a_cleared_chart_shows_empty_axes_not_the_old_chat(
    charts: ChatCharts, qtbot: QtBot
) -> None:
    """A new pair or a new chat starts from empty axes: the old chat's minutes and
    speeds must not frame the new one's first seconds."""
    for step in range(1, 60):
        charts.add_rounds(rounds_event(step * 1.0, [1] * 400, [(4, 3, 3)] * 100))
    charts.redraw()
    box = charts.speed_plot.getViewBox()
    # pyqtgraph fits its auto-ranged axes when it next paints.
    qtbot.waitUntil(lambda: box.viewRange()[0][1] > 50 and box.viewRange()[1][1] > 100)
    charts.clear()
    for plot in (charts.speed_plot, charts.acceptance_plot, charts.length_plot):
        assert plot.getViewBox().viewRange()[0] == pytest.approx([0, 1])
    assert charts.speed_plot.getViewBox().viewRange()[1] == pytest.approx([0, 1])
    charts.add_rounds(rounds_event(0.5, [1] * 4, [(4, 3, 3)]))
    charts.add_rounds(rounds_event(2.0, [1] * 40, [(4, 3, 3)] * 10))
    charts.redraw()
    # Fitted to the new chat again, not frozen at 0..1.
    qtbot.waitUntil(lambda: 1.5 < box.viewRange()[0][1] < 5)


def test_the_mode_note_wraps_whatever_the_engine_says(qtbot: QtBot) -> None:
    """The engine's reason may hold one long unbreakable word (a path, a key)."""
    choice = ModeChoice()
    page = QWidget()
    QVBoxLayout(page).addWidget(choice.note)
    qtbot.addWidget(page)
    choice.note.setText(plain_default_note("x" * 3000))  # no place to break
    choice.note.show()
    page.show()
    assert page.minimumSizeHint().width() < SCREEN_WIDTH // 2


def test_status_notes_never_move_the_toolbar_or_the_transcript(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.chat_note.hide()
    page.mode_note.hide()

    def tops() -> tuple[int, int, int]:
        QApplication.processEvents()
        return (
            page.mode.mapTo(page, page.mode.rect().topLeft()).y(),
            page.transcript.mapTo(page, page.transcript.rect().topLeft()).y(),
            # Nor resize it and the charts: each time they did, a streaming chat's charts
            # were laid out and painted anew (40-100 ms).
            page.transcript.height(),
        )

    before = tops()
    page.say("Exported the chat to /tmp/chat.md and /tmp/chat.json.")
    assert tops() == before
    page.mode_note.setText(plain_default_note("this MNN cannot roll a draft back"))
    page.mode_note.show()
    assert tops() == before
    page.chat_note.hide()
    page.mode_note.hide()
    assert tops() == before
    # Sending hides the note of the last reply; a note of this one comes soon after.
    page.say("Plain for now: drafting did not pay: 0.61x plain (0.55-0.67, 95 %, 6 rounds).")
    assert tops() == before
    page.chat_note.hide()
    assert tops() == before


def test_the_notes_ask_the_page_for_their_room_and_grow_only_by_their_width(
    qtbot: QtBot,
) -> None:
    """A wrapped note's own size hint is its text at a narrow width (hundreds of px
    high): asked for that, the page's layout gave the strip half the page now and then
    and took it back, laying the transcript and the charts out anew twice a reply."""
    first, second = wrap_to_width(QLabel()), wrap_to_width(QLabel())
    strip = NotesStrip(first, second)
    qtbot.addWidget(strip)
    strip.resize(600, 100)
    strip.show()
    second.hide()
    first.setText("A note that needs many lines at this width. " * 20)
    assert first.sizeHint().height() > 4 * strip.minimumHeight()  # what it used to ask
    assert strip.sizeHint().height() == strip.minimumHeight()
    assert strip.hasHeightForWidth()
    assert strip.heightForWidth(600) > strip.minimumHeight()  # a long note still grows it


def test_a_reopened_chats_single_speed_dot_sits_on_an_axis_from_zero(
    charts: ChatCharts,
) -> None:
    # Only per-reply totals are saved: one dot, which auto-range zoomed to 326.8-327.4.
    charts.show_saved([{"mode": "speculative", "tok_s": 327.1, "decode_seconds": 1.0}])
    low, high = charts.speed_plot.getViewBox().viewRange()[1]
    assert low == 0 and 327.1 < high < 2 * 327.1
    # A live reply after it gets its own fitted axis again.
    charts.start_reply("speculative")
    assert charts.speed_plot.getViewBox().autoRangeEnabled()[1]


def test_regenerating_a_reopened_chats_last_reply_takes_its_figures_away(
    charts: ChatCharts,
) -> None:
    first = {"mode": "speculative", "tok_s": 90.0, "decode_seconds": 1.0, "drafted": 3}
    last = {**first, "tok_s": 60.0, "acceptance": 0.5, "position_reached": [2, 1]}
    charts.show_saved([{**first, "position_reached": [1], "position_accepted": [1]}, last])
    assert charts.reply_speed.count == 2 and len(charts.position_reached) == 2
    charts.drop_last_reply()
    assert list(charts.reply_speed.data()[1]) == [90.0]
    assert charts.position_reached == [1] and charts.acceptance.count == 0
