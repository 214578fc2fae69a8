"""The context window on the Chat page: its meter, the question when a turn does not fit
(a new chat, or the oldest turns left out from then on), and a long prompt's reading
with its progress and Esc. Real widgets offscreen, the real engine worker on the fixture
bundles with a small max_all_tokens in the target's config.json, so a few turns fill it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.measure.conversations import Conversation, ConversationStore
from app.ui.base.engine_bridge import GENERATING, READY
from app.ui.chat.chat_context import DROPPING_WORDS
from app.ui.chat.chat_context_full import DROP_OLDEST, NEW_CHAT, NOT_SENT_NOTE
from app.ui.chat.chat_transcript import OUT_OF_CONTEXT, figures_line
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import chat_window, recipe_update, send

Copy = Callable[..., Path]
QUESTION = "Tell me about lighthouses."
PAIR = ("qwen3-target", "qwen3-draft-noisy")
LONG_PROMPT = "The keeper climbed the stairs of the old lighthouse every night. " * 150


def _chat(
    qtbot: QtBot, bundle_copy: Copy, pair: tuple[str, str], window_tokens: int
) -> AbstractContextManager[MainWindow]:
    """The chat window on this pair, its target's context window this many tokens."""
    limit = recipe_update(pair[0], {"max_all_tokens": window_tokens})
    return chat_window(qtbot, bundle_copy, pair, ("qwen3-draft-identical",), prepare=limit)


@pytest.fixture
def small_window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """A 160-token window: replies of 24 tokens fill it in about four turns."""
    with _chat(qtbot, bundle_copy, PAIR, 160) as win:
        win.chat_page.max_tokens.setValue(24)
        yield win


def _finished(window: MainWindow) -> bool:
    page = window.chat_page
    messages = page.transcript.messages
    return page.bridge.state == READY and bool(messages) and messages[-1].stats is not None


def _send(qtbot: QtBot, window: MainWindow, text: str = QUESTION) -> None:
    """Send `text`; until its reply ends or the question comes instead."""
    send(qtbot, window, text, wait=False)
    qtbot.waitUntil(lambda: _finished(window) or _question(window) is not None, timeout=30_000)


def _question(window: MainWindow) -> QMessageBox | None:
    boxes = window.chat_page.findChildren(QMessageBox, "choiceDialog")
    shown = [b for b in boxes if b.isVisible()]
    return shown[0] if shown else None


def _press(box: QMessageBox, words: str) -> None:
    next(b for b in box.buttons() if b.text() == words).click()


def _chat_until_full(qtbot: QtBot, window: MainWindow) -> QMessageBox:
    """Send turns until one does not fit: the question comes instead of a reply."""
    for _ in range(10):
        _send(qtbot, window)
        box = _question(window)
        if box is not None:
            return box
    raise AssertionError("ten turns fitted in the window")


def _saved() -> Conversation:
    (newest, *_) = ConversationStore(app_dirs().data / "conversations").list().conversations
    return newest


def test_the_meter_grows_with_each_turn_and_clears_on_a_new_chat(
    small_window: MainWindow, qtbot: QtBot
) -> None:
    page = small_window.chat_page
    meter = page.context.meter
    # The loaded pair's window, before any reply (the engine said it with Loaded).
    assert meter.label.text() == "Context 0 / 160 tokens"
    used = []
    during: list[str] = []
    page.bridge.rounds.connect(lambda _event: during.append(meter.label.text()))
    for _ in range(2):
        _send(qtbot, small_window)
        # While the reply was written the meter said what it knew, never "empty".
        assert during and all("measuring…" in words for words in during)
        during.clear()
        stats = page.transcript.messages[-1].stats
        assert stats is not None and stats["window_tokens"] == 160
        used.append(stats["prompt_tokens"] + stats["tokens"])
        assert meter.used == used[-1] and meter.bar.value() == used[-1]
        assert meter.label.text() == f"Context {used[-1]:,} / 160 tokens"
    assert used[1] > used[0]
    page.new_button.click()
    assert meter.used is None and meter.label.text() == "Context 0 / 160 tokens"
    # Reopened from its file, the conversation's last reply gives the meter its figures.
    page.opening.open(_saved())
    assert meter.used == used[1] and meter.label.text() == f"Context {used[1]:,} / 160 tokens"
    # Another pair: its window is not known until it has loaded.
    small_window.show_page("pair")
    root = small_window.library.root
    small_window.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-identical")
    small_window.show_page("chat")
    assert meter.used is None and meter.label.text() == "Context: empty"
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    assert meter.label.text() == "Context 0 / 160 tokens"


def test_a_turn_that_does_not_fit_asks_and_a_new_chat_sends_it_there(
    small_window: MainWindow, qtbot: QtBot
) -> None:
    page = small_window.chat_page
    box = _chat_until_full(qtbot, small_window)
    # The engine's refusal names both numbers; the turn waits without an empty reply.
    assert "holds 160 tokens" in box.text()
    assert {b.text() for b in box.buttons()} == {NEW_CHAT, DROP_OLDEST, "Cancel"}
    turns = len(page.transcript.messages)
    assert page.transcript.messages[-1].role == "user"
    held = page.conversations.current
    _press(box, NEW_CHAT)
    qtbot.waitUntil(lambda: _finished(small_window), timeout=30_000)
    user, reply = page.transcript.messages
    assert user.text == QUESTION and reply.stats is not None and reply.text
    assert page.conversations.current is not None and page.conversations.current != held
    # The full conversation stays listed, without the message that went to the new one.
    store = ConversationStore(app_dirs().data / "conversations")
    assert held is not None
    old = store.read(store.path(held.id))
    assert len(old.messages) == turns - 1 and old.messages[-1].role == "assistant"


def test_dropping_the_oldest_turns_resends_and_is_kept_for_later_turns(
    small_window: MainWindow, qtbot: QtBot
) -> None:
    page = small_window.chat_page
    _press(_chat_until_full(qtbot, small_window), DROP_OLDEST)
    qtbot.waitUntil(lambda: _finished(small_window), timeout=30_000)
    stats = page.transcript.messages[-1].stats
    assert stats is not None and stats["dropped_messages"] > 0
    dropped = stats["dropped_messages"]
    # Left out, but still on screen: greyed, each marked.
    assert page.transcript.out_of_context == dropped
    assert page.transcript.toPlainText().count(OUT_OF_CONTEXT) == dropped
    assert "oldest messages left out to fit" in figures_line(page.transcript.messages[-1])
    assert DROPPING_WORDS in page.context.meter.label.text()
    assert "leaves out its oldest turns" in page.chat_note.text()
    assert _saved().drop_oldest
    # The next turn goes without asking, leaving out what it needs.
    _send(qtbot, small_window)
    assert _question(small_window) is None
    later = page.transcript.messages[-1].stats
    assert later is not None and later["dropped_messages"] >= dropped
    # Reopened, the conversation still drops, and its left-out turns are still marked.
    page.new_button.click()
    assert not page.context.dropping and DROPPING_WORDS not in page.context.meter.label.text()
    page.opening.open(_saved())
    assert page.context.dropping and DROPPING_WORDS in page.context.meter.label.text()
    assert page.transcript.out_of_context == later["dropped_messages"]


def test_after_a_reply_that_filled_the_window_the_next_turn_asks_first(
    qtbot: QtBot, bundle_copy: Copy
) -> None:
    with _chat(qtbot, bundle_copy, PAIR, 100) as win:
        page = win.chat_page
        page.max_tokens.setValue(400)
        _send(qtbot, win)
        reply = page.transcript.messages[-1]
        assert reply.stopped_by == "context_full"
        assert page.context.meter.label.text() == "Context 100 / 100 tokens (full)"
        page.input.setPlainText("And then?")
        page.send()
        box = _question(win)
        assert box is not None and page.bridge.state == READY  # asked before sending
        assert "filled the 100-token context window" in box.text()
        _press(box, "Cancel")
        # Not sent: the message is back in the box, the conversation as it was.
        assert page.input.toPlainText() == "And then?"
        assert page.transcript.messages[-1] is reply and NOT_SENT_NOTE in page.chat_note.text()
        assert [m.role for m in _saved().messages] == ["user", "assistant"]


@pytest.fixture
def roomy_window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The fast pair's target reads a few thousand tokens for seconds."""
    with _chat(qtbot, bundle_copy, ("fast-target", "fast-draft"), 16_384) as win:
        win.chat_page.mode.setCurrentIndex(1)  # plain: the target's window alone
        qtbot.waitUntil(lambda: win.chat_page.bridge.state == READY, timeout=30_000)
        yield win


def test_a_long_prompt_shows_its_reading_and_esc_stops_it(
    roomy_window: MainWindow, qtbot: QtBot
) -> None:
    page = roomy_window.chat_page
    shown: list[str] = []
    meters: list[str] = []
    totals: list[int] = []

    def on_progress(_model: str, done: int, total: int) -> None:
        # The page has drawn the report (its slot runs first): Esc at once.
        shown.append(page.context.prefill.text() if page.context.prefill.isVisible() else "")
        if len(shown) == 1:
            # The meter says the prompt's size once it is known, not "empty".
            meters.append(page.context.meter.label.text())
            totals.append(total)
            qtbot.keyClick(page.transcript, Qt.Key.Key_Escape)  # type: ignore[no-untyped-call]

    page.bridge.prefilling.connect(on_progress)
    page.input.setPlainText(LONG_PROMPT)
    page.send()
    assert page.bridge.state == GENERATING
    qtbot.waitUntil(lambda: _finished(roomy_window), timeout=60_000)
    page.bridge.prefilling.disconnect(on_progress)
    assert re.fullmatch(
        r"Reading the prompt: [\d,]+ / [\d,]+ tokens \(target\), about \d+ (s|min) left", shown[0]
    )
    reply = page.transcript.messages[-1]
    assert reply.stopped_by == "cancelled" and reply.text == "" and reply.stats is not None
    assert reply.stats["tokens"] == 0
    assert "stopped while reading the prompt" in figures_line(reply)
    assert page.context.prefill.isHidden()
    assert re.fullmatch(
        rf"Context {totals[0]:,}( / [\d,]+)? tokens so far \(measuring…\)", meters[0]
    )
    # A reply with no tokens is a reply like any other: the chat goes on.
    page.max_tokens.setValue(8)
    _send(qtbot, roomy_window, "Briefly?")
    assert page.transcript.messages[-1].stats is not None
    assert len(page.transcript.messages) == 4
