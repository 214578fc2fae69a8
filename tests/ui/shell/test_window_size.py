"""The window fits a 1024x700 screen on every page, whatever the state.

No message, pack name or chart may raise the window's minimum size past that: a long
"cannot run" reason once made the Chat header one line and the minimum width 1,780 px,
pushing half the page off screen. Checked with real widgets offscreen: the minimum
size Qt's layouts compute, on every page, in an empty library, with a blocked pair, a
broken pack, and while generating.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.ui.base.background import wait_for_background
from app.ui.base.engine_bridge import ERROR, GENERATING, READY
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

Copy = Callable[..., Path]
SCREEN = (1024, 700)


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    made = create_main_window()
    qtbot.addWidget(made)
    made.resize(*SCREEN)
    made.show()
    yield made
    made._closing_anyway = True
    made.close()
    wait_for_background()


def _assert_every_page_fits(window: MainWindow, qtbot: QtBot, state: str) -> None:
    for key in window.pages:
        window.show_page(key)
        qtbot.wait(0)  # let the page lay itself out after showing
        hint = window.minimumSizeHint().expandedTo(window.minimumSize())
        assert hint.width() <= SCREEN[0] and hint.height() <= SCREEN[1], (
            f"{state}: the {key} page needs at least {hint.width()}x{hint.height()}"
        )


def test_every_page_fits_with_an_empty_library(window: MainWindow, qtbot: QtBot) -> None:
    _assert_every_page_fits(window, qtbot, "empty library")


def test_every_page_fits_with_a_blocked_pair_and_a_broken_pack(
    window: MainWindow, qtbot: QtBot, bundle_copy: Copy
) -> None:
    root = window.library.root
    for name in ("qwen3-target", "qwen35-draft", "qwen3-draft-noisy"):
        bundle_copy(name, root / name, desktop=True)
    # A long name and a half-copied pack: both appear in lists, cards and messages.
    broken = bundle_copy("qwen3-draft-independent", root / ("a-pack-with-a-long-name-" * 4))
    (broken / "llm.mnn.weight").write_bytes(b"")
    window.library_page.refresh()
    window.library_page.select_path(broken)
    window.show_page("pair")
    window.pair_page.choose(root / "qwen3-target", root / "qwen35-draft")  # blocked
    _wait_for_chat_error(window, qtbot)
    _assert_every_page_fits(window, qtbot, "blocked pair and a broken pack")
    window.show_page("pair")
    window.pair_page.choose(broken, root / "qwen3-draft-noisy")  # a broken target
    _wait_for_chat_error(window, qtbot)
    _assert_every_page_fits(window, qtbot, "broken target")


def _wait_for_chat_error(window: MainWindow, qtbot: QtBot) -> None:
    """Chat says why it cannot run once the engine has refused the pair."""
    window.show_page("chat")
    qtbot.waitUntil(lambda: window.chat_page.bridge.state == ERROR, timeout=60_000)


def test_every_page_fits_while_generating(
    window: MainWindow, qtbot: QtBot, bundle_copy: Copy
) -> None:
    root = window.library.root
    for name in ("fast-target", "fast-draft"):
        bundle_copy(name, root / name, desktop=True)
    window.library_page.refresh()
    window.show_page("pair")
    window.pair_page.choose(root / "fast-target", root / "fast-draft")
    window.show_page("chat")
    chat = window.chat_page
    bridge = chat.bridge
    qtbot.waitUntil(lambda: bridge.state == READY, timeout=60_000)
    chat.max_tokens.setValue(20_000)
    chat.input.setPlainText("Tell me a long story about lighthouses.")
    chat.send()
    qtbot.waitUntil(lambda: bridge.state == GENERATING, timeout=60_000)
    try:
        _assert_every_page_fits(window, qtbot, "generating")
    finally:
        window.chat_page.stop()
        qtbot.waitUntil(lambda: bridge.state == READY, timeout=60_000)


def test_no_message_widens_the_window_even_without_a_place_to_break(
    window: MainWindow, qtbot: QtBot
) -> None:
    """Every label that holds words given at run time (wrapping ones, and the ones
    built empty to be filled later) may one day hold an error, a path or a pack name
    with no space in it: none of them may set the window's minimum width. (The status
    bar's own figures, engine memory and CPU load, are a few short words.)"""
    unbreakable = "x" * 400
    for key in window.pages:
        window.show_page(key)
        for label in window.findChildren(QLabel):
            if label is window.facts_label:
                continue
            if label.wordWrap() or not label.text():
                label.setText(unbreakable)
    _assert_every_page_fits(window, qtbot, "an unbreakable word in every message")
