"""The Chat page offscreen with the real engine worker on the fixture bundles."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.engine.protocol import Round
from app.ui.base.engine_bridge import CRASHED, ERROR, GENERATING, READY
from app.ui.chat.chart_words import ROLLING
from app.ui.chat.chat_charts import ChatCharts
from app.ui.chat.chat_transcript import Message, figures_line
from app.ui.shell.main_window import MainWindow
from tests.helpers.engine_events import loaded_event, rounds_event
from tests.helpers.windows import chat_window, fixed_drafting, send

Copy = Callable[..., Path]
LONG = 20_000
PAIR = ("qwen3-target", "qwen3-draft-noisy")


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    # Greedy: these tests need replies that are the same on every run (long ones for
    # stopping); sampling on the page has its own tests (test_gui_sampling.py). Fixed
    # drafting: their counts must not hang on how busy the machine is (adaptive drafting
    # has its own tests, test_gui_adaptive.py).
    prepare = fixed_drafting(PAIR[1])
    with chat_window(qtbot, bundle_copy, PAIR, ("qwen35-draft",), prepare=prepare) as win:
        yield win


def _stats(window: MainWindow, index: int = -1) -> dict[str, Any]:
    stats = window.chat_page.transcript.messages[index].stats
    assert stats is not None
    return stats


def test_send_streams_and_counts_match_the_engine(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    page.max_tokens.setValue(120)
    send(qtbot, window, "Tell me about lighthouses.")
    user, reply = page.transcript.messages
    assert user.role == "user" and user.text == "Tell me about lighthouses."
    stats = reply.stats
    assert stats is not None and stats["mode"] == "speculative"
    assert (
        stats["drafting"] == "fixed" and stats["drafted"] == stats["draft_length"] * stats["rounds"]
    )
    # Every token the engine says came from the draft is highlighted, and no other.
    assert reply.draft_tokens == stats["from_draft"]
    assert stats["from_draft"] + stats["corrections"] == stats["tokens"]
    shown = page.transcript.toPlainText()
    assert reply.text[:40] in shown
    assert f"{stats['tokens']} tokens" in shown and "acceptance" in shown
    # The charts hold the same numbers: per-position acceptance as the engine counted it.
    expected = [
        a / r for a, r in zip(stats["position_accepted"], stats["position_reached"], strict=True)
    ]
    assert page.charts.per_position() == pytest.approx(expected)
    # Whether the reply came in one batch or many, the speed chart ends on the reply's
    # own figure, and the other charts hold the rounds.
    _, reply_speed = page.charts.reply_speed.data()
    assert list(reply_speed) == pytest.approx([stats["tok_s"]])
    assert stats["tok_s"] == pytest.approx(
        (stats["tokens"] - stats["first_tokens"]) / stats["decode_seconds"]
    )
    assert page.charts.acceptance.count > 0


def test_rolling_figures_of_a_short_reply_equal_the_engines(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.max_tokens.setValue(40)
    send(qtbot, window, "Tell me about lighthouses.")
    stats = _stats(window)
    assert stats["rounds"] <= ROLLING  # the rolling window holds the whole reply
    _, acceptance = page.charts.acceptance.data()
    assert acceptance[-1] == pytest.approx(stats["acceptance"])
    _, length = page.charts.accepted_length.data()
    assert length[-1] == pytest.approx(stats["mean_accepted_length"])


def test_stop_is_quick_and_a_second_turn_follows(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    page.max_tokens.setValue(LONG)
    send(qtbot, window, "Write forever.", wait=False)
    qtbot.waitUntil(
        lambda: page.bridge.state == GENERATING and len(page.transcript.messages[-1].answer) > 20,
        timeout=30_000,
    )
    # How quickly it stops is a figure of benchmarks/cancel_latency.py, not of a test:
    # here, that Escape stops this reply long before its token limit, and chat goes on.
    qtbot.keyClick(page.transcript, Qt.Key.Key_Escape)  # type: ignore[no-untyped-call]
    qtbot.waitUntil(
        lambda: page.bridge.state == READY and page.transcript.messages[-1].stopped_by != "",
        timeout=30_000,
    )
    assert page.transcript.messages[-1].stopped_by == "cancelled"
    assert _stats(window)["tokens"] < LONG
    page.max_tokens.setValue(30)
    send(qtbot, window, "And now briefly?")
    assert len(page.transcript.messages) == 4
    assert _stats(window, -1)["prefill_fed"] < _stats(window, -1)["prompt_tokens"]


def test_mode_switch_gives_a_reference_line(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    page.max_tokens.setValue(60)
    page.mode.setCurrentIndex(1)
    send(qtbot, window, "Plain please.")
    plain = page.transcript.messages[-1]
    assert plain.stats is not None and plain.stats["mode"] == "plain"
    assert plain.draft_tokens == 0
    assert page.charts.reference_tok_s == plain.stats["tok_s"]
    page.mode.setCurrentIndex(0)
    send(qtbot, window, "Now speculative.")
    assert _stats(window, -1)["mode"] == "speculative"


def test_new_chat_clears_everything(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    page.max_tokens.setValue(20)
    send(qtbot, window, "Hello.")
    page.new_button.click()
    assert page.transcript.messages == [] and page.charts.speed.count == 0
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    send(qtbot, window, "Hello again.")
    assert _stats(window, -1)["prefill_fed"] == _stats(window, -1)["prompt_tokens"]


def test_export_contains_the_figures(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    page = window.chat_page
    page.max_tokens.setValue(40)
    send(qtbot, window, "Export me.")
    page.export_json(tmp_path / "run.json")
    page.export_markdown(tmp_path / "run.md")
    assert page.charts.save_png(str(tmp_path / "charts.png"))
    record = json.loads((tmp_path / "run.json").read_text())
    reply = record["messages"][1]
    assert reply["stats"]["tokens"] == _stats(window, 1)["tokens"]
    assert reply["draft_tokens"] == reply["stats"]["from_draft"]
    assert record["recipe"]["draft"]["memory"] == "normal"
    assert record["figures"]["per_position_acceptance"] == page.charts.per_position()
    markdown = (tmp_path / "run.md").read_text()
    assert "Export me." in markdown and f"{reply['stats']['tokens']} tokens" in markdown
    assert (tmp_path / "charts.png").stat().st_size > 1000


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX signal stands for the crash")
def test_crash_keeps_the_transcript_and_restart_works(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    page.max_tokens.setValue(LONG)
    send(qtbot, window, "Crash while talking.", wait=False)
    qtbot.waitUntil(lambda: page.bridge.state == GENERATING, timeout=30_000)
    page.bridge.client.kill(signal.SIGSEGV)
    qtbot.waitUntil(lambda: page.bridge.state == CRASHED, timeout=10_000)
    assert "SIGSEGV" in page.state_label.text()
    assert page.restart_button.isVisible()
    assert page.transcript.messages[0].text == "Crash while talking."
    boxes = [
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    ]
    assert any("engine crashed" in b.text().lower() or "SIGSEGV" in b.text() for b in boxes)
    for box in boxes:
        box.close()
    page.restart_button.click()
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    page.max_tokens.setValue(10)
    send(qtbot, window, "Still there?")
    assert page.transcript.messages[0].text == "Crash while talking."


def test_blocked_pair_is_refused_with_the_reason(window: MainWindow, qtbot: QtBot) -> None:
    root = window.library.root
    window.show_page("pair")
    window.pair_page.choose(root / "qwen3-target", root / "qwen35-draft")
    window.show_page("chat")
    page = window.chat_page
    qtbot.waitUntil(lambda: page.bridge.state == ERROR, timeout=30_000)
    assert "cannot work" in page.state_label.text() and "vocabularies" in page.state_label.text()
    assert not page.send_button.isEnabled()


def test_chart_figures_match_hand_counted_batches(qtbot: QtBot) -> None:
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.start_reply()
    # (emitted, accepted, drafted) per round. The first batch arrives
    # after a 2 s prefill: it starts the clock and gives no speed point.
    charts.add_rounds(rounds_event(2.0, [1, 2, 3], [(3, 2, 3)]))
    assert charts.speed.count == 0
    charts.add_rounds(rounds_event(2.1, [4, 5, 6, 7], [(4, 3, 3), (0, 0, 0)]))
    charts.add_rounds(rounds_event(2.2, [8, 9], [(2, 1, 3)]))
    xs, ys = charts.speed.data()
    # Tokens after the first batch over the time since it: 4 in 0.1 s, then 6 in 0.2 s.
    assert list(ys) == pytest.approx([40.0, 30.0])
    assert list(xs) == pytest.approx([2.1, 2.2])
    _, acceptance = charts.acceptance.data()
    assert acceptance[-1] == pytest.approx((2 + 3 + 0 + 1) / (3 + 3 + 0 + 3))
    _, length = charts.accepted_length.data()
    assert length[-1] == pytest.approx((3 + 4 + 0 + 2) / 4)
    assert charts.per_position() == pytest.approx([3 / 3, 2 / 3, 1 / 2])


def test_drafted_length_and_stepping_aside_are_charted(qtbot: QtBot) -> None:
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.start_reply()
    charts.add_rounds(rounds_event(1.0, [1, 2, 3], [(3, 2, 4)]))
    # The round that made adaptive drafting step aside, then plain steps while aside.
    noted = Round(1, 0, 2, 0.0, 0.0, note="drafting did not pay")
    aside = Round(1, 0, 0, 0.0, 0.0, aside=True)
    event = rounds_event(1.1, [4, 5, 6], [])
    charts.add_rounds(replace(event, rounds=(noted, aside, aside)))
    _, drafted = charts.drafted_length.data()
    assert list(drafted) == pytest.approx([4.0, (4 + 2 + 0 + 0) / 4])
    xs, ys = charts.asides.data()
    assert list(xs) == pytest.approx([1.1]) and list(ys) == [0.0]
    charts.redraw()
    assert list(charts.aside_marks.getData()[0]) == pytest.approx([1.1])


def test_a_reply_in_one_batch_still_gets_its_speed_dot(qtbot: QtBot) -> None:
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.start_reply()
    # The whole reply in one batch: no window to measure a rate over, so no line point.
    charts.add_rounds(rounds_event(0.5, [1, 2, 3], [(2, 1, 2)]))
    assert charts.speed.count == 0
    charts.finish_reply(80.0)
    # A second reply's dot sits after the first one's end: time runs on across turns.
    charts.start_reply()
    charts.add_rounds(rounds_event(0.25, [4], [(1, 0, 2)]))
    charts.finish_reply(40.0)
    charts.finish_reply(None)  # a reply with no decoding (stopped at once)
    xs, ys = charts.reply_speed.data()
    assert list(xs) == pytest.approx([0.5, 0.75]) and list(ys) == pytest.approx([80.0, 40.0])
    charts.redraw()
    assert list(charts.reply_dots.getData()[1]) == pytest.approx([80.0, 40.0])


def test_verify_agreement_is_shown_with_the_pair_and_each_reply(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    qtbot.waitUntil(lambda: page.verify_agreement is not None, timeout=30_000)
    found = page.verify_agreement
    assert found is not None and found.exact  # the desktop recipe (memory normal) is exact
    assert "verify agreement 1.00" in page.pair_label.text()
    page.max_tokens.setValue(20)
    send(qtbot, window, "Hello.")
    stats = _stats(window)
    assert stats["verify_agreement"] == found.to_json()
    assert "verify agreement 1.00" in page.transcript.toPlainText()
    assert "limited by the recipe" not in page.transcript.toPlainText()


def test_a_limiting_agreement_is_said_under_the_reply() -> None:
    limited = {"agreement": 0.875, "matched": 56, "checked": 64, "draft_length": 3}
    reply = Message("assistant", mode="speculative")
    reply.stats = {
        "tokens": 30,
        "acceptance": 0.85,
        "verify_agreement": {**limited, "verify": "batched"},
    }
    assert "acceptance near it: limited by the recipe" in figures_line(reply)
    assert "verify agreement 0.88 (an identical draft: an estimated 0.77, 95 % range" in (
        figures_line(reply)
    )
    reply.stats["acceptance"] = 0.3
    assert figures_line(reply).endswith(") · speculative")
    assert "limited" not in figures_line(reply)


def test_a_tight_memory_warning_stays_beside_the_pair(window: MainWindow, qtbot: QtBot) -> None:
    # The engine's own figures decide this (tests/engine/test_ram_estimate.py makes it say so);
    # here: what the page shows of a pair whose load warned.
    page = window.chat_page
    warning = "Memory is tight: this pair needs about 3.3 GB; 3.6 GB of memory is available."
    known = page.bridge.pair_state
    page.show_pair_state(replace(known, loaded=loaded_event(memory_warning=warning)))
    assert f"⚠ {warning}" in page.pair_label.text()
    page.show_pair_state(replace(known, loaded=loaded_event()))
    assert "⚠" not in page.pair_label.text()


def test_a_plain_reply_draws_no_acceptance(qtbot: QtBot) -> None:
    """Plain decoding drafts nothing: its rounds (one token, nothing drafted) must not
    draw acceptance or a mean accepted length of 1, nor carry an earlier reply's on."""
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.start_reply("speculative")
    charts.add_rounds(rounds_event(0.5, [1, 2, 3, 4], [(4, 3, 3)]))
    charts.add_rounds(rounds_event(0.6, [5, 6, 7, 8], [(4, 3, 3)]))
    charts.finish_reply(40.0)
    drawn = (charts.acceptance.count, charts.accepted_length.count, charts.per_position())
    charts.start_reply("plain")
    for step in range(1, 40):
        charts.add_rounds(rounds_event(0.1 * step, [step], [(1, 0, 0)]))
    charts.finish_reply(10.0)
    assert (charts.acceptance.count, charts.accepted_length.count, charts.per_position()) == drawn
    assert charts.speed.count > 30  # its speed is drawn


def test_an_emptied_chart_forgets_the_old_speed_range(qtbot: QtBot) -> None:
    charts = ChatCharts()
    qtbot.addWidget(charts)
    charts.start_reply()
    for step in range(1, 20):
        charts.add_rounds(rounds_event(0.1 * step, list(range(100)), [(4, 3, 3)] * 25))
    view = charts.speed_plot.getViewBox()
    charts.set_reference(800.0)  # the old pair's plain speed
    charts.redraw()
    view.updateAutoRange()  # what painting the plot does
    charts.clear()
    view.updateAutoRange()
    charts.set_reference(None)  # a new pair: no plain speed yet
    charts.redraw()
    view.updateAutoRange()
    assert charts.speed_plot.viewRange()[1] == pytest.approx([0.0, 1.0])


def test_a_message_is_copied_and_the_last_reply_regenerated(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.max_tokens.setValue(12)
    send(qtbot, window, "Copy me.")
    reply = page.transcript.messages[1]
    html = page.transcript.toHtml()
    assert "copy:0" in html and "copy:1" in html and "regenerate:" in html
    page.transcript.anchorClicked.emit(QUrl("copy:1"))  # what a click on its Copy sends
    # Without the leading space of the first token, and said.
    assert QApplication.clipboard().text() == reply.text.strip() != ""
    assert not QApplication.clipboard().text()[0].isspace()
    assert "Copied the reply" in page.chat_note.text() and page.chat_note.isVisible()
    page.transcript.anchorClicked.emit(QUrl("copy:0"))
    assert QApplication.clipboard().text() == "Copy me."
    # One dot per reply; the live speed curve may hold no sample at all for a reply of
    # 12 tokens (that depends on how the worker's events batch), so it is not counted.
    dots = page.charts.reply_speed.count
    assert dots == 1
    page.transcript.anchorClicked.emit(QUrl("regenerate:"))
    assert page.bridge.state == GENERATING and len(page.transcript.messages) == 2
    # The discarded reply's dot and curve left the charts with it.
    assert page.charts.reply_speed.count == 0 and page.charts.speed.count == 0
    assert page.charts.per_position() == []
    qtbot.waitUntil(
        lambda: page.bridge.state == READY and page.transcript.messages[-1].stats is not None,
        timeout=30_000,
    )
    again = page.transcript.messages[1]
    assert again is not reply and again.text == reply.text  # greedy: the same words
    assert page.charts.reply_speed.count == 1  # the reply that stands, once
    assert [m.role for m in page.transcript.messages] == ["user", "assistant"]
    (saved,) = page.panel.store.list().conversations
    assert len(saved.messages) == 2 and saved.messages[1].stats == again.stats
    send(qtbot, window, "Next.")  # only the last reply can be regenerated
    assert page.transcript.toHtml().count("regenerate:") == 1
