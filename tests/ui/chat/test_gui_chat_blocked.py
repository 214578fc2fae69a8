"""A pair that cannot work together is known before the engine is asked (#28): the
Chat page never gets the engine's Failed("blocked_pair") for it. Plain mode loads the
target alone in one request; Speculative asks the engine nothing and says why. Real
widgets offscreen, the real engine worker on the fixture bundles; the requests the
bridge sends are counted on their way to the real client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.engine.protocol import FailureCode, Load, Mode, Request
from app.ui.base.engine_bridge import ERROR, READY
from app.ui.chat.chat_mode import MODES
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        names = ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft")
        add_packs(win, bundle_copy, names, desktop=True)
        _choose(win, "qwen3-draft-noisy")
        qtbot.waitUntil(lambda: win.chat_page.bridge.state == READY, timeout=60_000)
        yield win


def _choose(window: MainWindow, draft: str) -> None:
    root = window.library.root
    window.show_page("pair")
    window.pair_page.choose(root / "qwen3-target", root / draft)
    window.show_page("chat")


def _count(window: MainWindow) -> tuple[list[Load], list[str]]:
    """From now on: the Load requests the bridge sends, and the failure codes it hears."""
    bridge = window.chat_page.bridge
    loads: list[Load] = []
    failures: list[str] = []
    send = bridge.client.send

    def counted(request: Request[Any]) -> int:
        if isinstance(request, Load):
            loads.append(request)
        return send(request)

    bridge.client.send = counted  # type: ignore[method-assign]
    bridge.failed.connect(lambda code, _message: failures.append(code))
    return loads, failures


def test_plain_loads_a_blocked_pairs_target_alone_in_one_request(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.mode.setCurrentIndex(MODES.index(Mode.PLAIN))
    loads, failures = _count(window)
    _choose(window, "qwen35-draft")
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=60_000)
    root = window.library.root
    assert loads == [Load(target=str(root / "qwen3-target"))]  # no draft, asked once
    assert FailureCode.BLOCKED_PAIR not in failures and failures == []
    # The reason is shown: the note says the target runs alone, the engine's words
    # behind Why? and in its tooltip; the pair is the chosen one.
    assert "target alone" in page.mode_note.text() and "Why?" in page.mode_note.text()
    assert "vocabularies" in page.mode_note.toolTip()
    assert page.loaded_pair == (root / "qwen3-target", root / "qwen35-draft")
    assert page.send_button.isEnabled()


def test_speculative_asks_the_engine_nothing_for_a_blocked_pair(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    loads, failures = _count(window)
    _choose(window, "qwen35-draft")
    qtbot.waitUntil(lambda: page.bridge.state == ERROR, timeout=60_000)
    assert loads == [] and failures == []
    assert "cannot work" in page.state_label.text() and "vocabularies" in page.last_error
    assert "Choose Plain" in page.mode_note.text() and not page.send_button.isEnabled()
    # Plain then: the target alone, in one request.
    page.mode.setCurrentIndex(MODES.index(Mode.PLAIN))
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=60_000)
    assert [load.draft for load in loads] == [None] and failures == []
