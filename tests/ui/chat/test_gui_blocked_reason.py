"""A pair the engine refuses says why, readably, under the Chat header: wrapped to a
few lines at any width, the whole in the tooltip, and never widening the window. Real
widgets offscreen, the real engine worker on the fixture bundles."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.ui.base.engine_bridge import ERROR
from app.ui.chat.chat_header import REASON_LINES, ReasonLabel
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        add_packs(win, bundle_copy, ("qwen3-target", "qwen35-draft"), desktop=True)
        yield win


def _resize(window: MainWindow, qtbot: QtBot, width: int) -> None:
    """The window at that width, and the reason laid out in it (half the window wide,
    whichever of 1024 and 1600 px came before)."""
    window.resize(width, 700)
    reason = window.chat_page.state_label.reason
    qtbot.waitUntil(lambda: window.width() == width and width // 2 < reason.width() < width)


def _words(text: str) -> list[str]:
    return text.replace("…", " ").split()


def test_a_blocked_pair_says_why_in_lines_that_can_be_read(
    window: MainWindow, qtbot: QtBot
) -> None:
    root = window.library.root
    window.show_page("pair")
    window.pair_page.choose(root / "qwen3-target", root / "qwen35-draft")
    window.show_page("chat")
    page = window.chat_page
    qtbot.waitUntil(lambda: page.bridge.state == ERROR, timeout=60_000)
    reason = page.state_label.reason
    assert reason.text() == page.last_error and "vocabularies" in page.last_error
    assert reason.toolTip() == page.last_error
    for width in (1024, 1600):
        _resize(window, qtbot, width)
        assert reason.isVisible()
        lines = reason.lines(reason.width())
        # A few whole lines, each within the label's width, in the reason's own order...
        assert 1 < len(lines) <= REASON_LINES
        assert all(reason.fontMetrics().horizontalAdvance(ln) <= reason.width() for ln in lines)
        shown = " ".join(lines)
        assert shown.startswith("This pair cannot work: The models have different vocabularies")
        assert " ".join(_words(shown)[:-1]) in " ".join(_words(page.last_error))
        # ...as high as they are, above the page, and the window still fits the screen.
        assert reason.height() >= len(lines) * reason.fontMetrics().lineSpacing()
        assert window.minimumSizeHint().width() <= 1024
    # The wider window shows more of the reason than the narrower one did.
    wide = " ".join(reason.lines(reason.width()))
    _resize(window, qtbot, 1024)
    assert len(" ".join(reason.lines(reason.width()))) < len(wide)


def test_a_reason_with_no_place_to_break_stays_within_its_width(qtbot: QtBot) -> None:
    """The engine's words may hold a path or key longer than the line."""
    reason = ReasonLabel()
    page = QWidget()
    QVBoxLayout(page).addWidget(reason)
    qtbot.addWidget(page)
    reason.set_text("/a/long/path/" + "x" * 3000)
    page.resize(400, 300)
    page.show()
    qtbot.waitUntil(lambda: reason.isVisible() and reason.width() < 400)
    lines = reason.lines(reason.width())
    assert len(lines) == REASON_LINES and lines[-1].endswith("…")
    assert all(reason.fontMetrics().horizontalAdvance(ln) <= reason.width() for ln in lines)
    assert page.minimumSizeHint().width() < 200
    reason.set_text("")
    assert reason.isHidden()


def test_a_folded_reason_unfolds_on_a_click_to_its_last_word(qtbot: QtBot) -> None:
    """The whole reason on the page itself, not only in a tooltip."""
    reason = ReasonLabel()
    page = QWidget()
    QVBoxLayout(page).addWidget(reason)
    qtbot.addWidget(page)
    text = " ".join(f"word{i}" for i in range(200)) + " the-last-word."
    reason.set_text(text)
    page.resize(400, 600)
    page.show()
    qtbot.waitUntil(lambda: reason.isVisible() and reason.width() < 400)
    folded = reason.lines(reason.width())
    assert len(folded) == REASON_LINES and reason.folds()
    assert "the-last-word." not in " ".join(folded)
    QTest.mouseClick(reason, Qt.MouseButton.LeftButton)
    shown = reason.lines(reason.width())
    assert _words(" ".join(shown)) == _words(text) and len(shown) > REASON_LINES
    assert all(reason.fontMetrics().horizontalAdvance(ln) <= reason.width() for ln in shown)
    qtbot.waitUntil(lambda: reason.height() > len(shown) * reason.fontMetrics().lineSpacing())
    qtbot.keyClick(reason, Qt.Key.Key_Space)  # type: ignore[no-untyped-call]
    assert reason.lines(reason.width()) == folded
    reason.set_text("A short reason.")
    assert not reason.folds() and reason.lines(reason.width()) == ["A short reason."]
