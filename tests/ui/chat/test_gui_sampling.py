"""Sampling on the Chat page: offscreen Qt, the real engine worker on the fixture bundles.

The sampler is chosen per request (the recipe's, or greedy), with a seed that repeats a
reply; what the page shows and what the engine did must agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from app.engine.client.engine_client import EngineClient
from app.engine.protocol import ChatTurn, Done, Generate, Load, Loaded, Mode
from app.ui.base.engine_bridge import READY
from app.ui.base.pair_state import PairState
from app.ui.chat.chat_sampling import GREEDY_INDEX
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import chat_window, recipe_update, send

Copy = Callable[..., Path]
OpenChat = Callable[[dict[str, object]], MainWindow]
# Qwen3's guidance for thinking mode, as a recipe says it.
QWEN3_SAMPLING = {
    "sampler_type": "mixed",
    "mixed_samplers": ["topK", "topP", "temperature"],
    "temperature": 0.6,
    "top_k": 20,
    "top_p": 0.95,
}
QWEN3_WORDS = "temperature 0.6, topK 20, topP 0.95"
PAIR = ("qwen3-target", "qwen3-draft-noisy")
PROMPT = "Tell me about lighthouses."
TOKENS = 30


@pytest.fixture
def open_chat(qtbot: QtBot, bundle_copy: Copy) -> Iterator[OpenChat]:
    """The main window on the Chat page with the fixture pair loaded, the target's
    recipe updated with the given keys first."""
    with ExitStack() as opened:

        def open_with(target_keys: dict[str, object]) -> MainWindow:
            prepare = recipe_update("qwen3-target", target_keys)
            chat = chat_window(qtbot, bundle_copy, PAIR, greedy=False, prepare=prepare)
            return opened.enter_context(chat)

        yield open_with


def _send(qtbot: QtBot, window: MainWindow, text: str) -> Done:
    """Send `text` as the user would and wait for the reply; the engine's Done for it."""
    page = window.chat_page
    done: list[Done] = []
    page.bridge.finished.connect(done.append)
    page.max_tokens.setValue(TOKENS)
    send(qtbot, window, text, wait=False)
    qtbot.waitUntil(
        lambda: bool(done) and page.transcript.messages[-1].stats is not None, timeout=30_000
    )
    page.bridge.finished.disconnect(done.append)
    return done[0]


def _new_chat(qtbot: QtBot, window: MainWindow) -> None:
    page = window.chat_page
    page.new_button.click()
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)


def _figures(window: MainWindow) -> str:
    return window.chat_page.transcript.toPlainText().splitlines()[-1]


def _modal_boxes() -> list[QWidget]:
    return [
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    ]


def test_a_seed_repeats_a_sampled_reply_without_reloading(
    open_chat: OpenChat, qtbot: QtBot
) -> None:
    window = open_chat(QWEN3_SAMPLING)
    page = window.chat_page
    loads: list[Loaded] = []  # each load's facts after this, as the bridge publishes them
    seen: list[Loaded | None] = [page.bridge.pair_state.loaded]

    def on_pair(state: PairState) -> None:
        loaded = state.loaded
        if loaded is not None and all(loaded is not known for known in seen):
            seen.append(loaded)
            loads.append(loaded)

    page.bridge.pair_changed.connect(on_pair)
    assert page.sampling.choice.currentText() == "Recipe sampler"  # the default
    assert page.sampling.note.text() == f"Sampling: {QWEN3_WORDS} · a fresh seed each reply"

    page.sampling.seed_edit.setText("1234")
    assert page.sampling.note.text() == f"Sampling: {QWEN3_WORDS} · seed 1234"
    first = _send(qtbot, window, PROMPT)
    assert first.stats.sampler == QWEN3_WORDS and first.stats.seed == 1234
    figures = _figures(window)
    # Adaptive drafting (on by default) would follow the machine's speed and so draw
    # another reply: with a seed the rounds draw at the fixed length, and say so.
    assert "speculative · fixed drafting for the seed (adaptive lengths follow" in figures
    assert f"· sampler: {QWEN3_WORDS} · seed 1234" in figures
    expected = first.stats.expected_acceptance
    assert expected is not None and first.stats.acceptance is not None
    checked = first.stats.checked_acceptance
    assert checked is not None
    assert f"accepted when checked {checked:.2f} (expected {expected:.2f})" in figures
    assert "None" not in figures
    first_shown = page.transcript.messages[-1].text

    _new_chat(qtbot, window)
    second = _send(qtbot, window, PROMPT)
    assert second.tokens == first.tokens and second.text == first.text
    assert page.transcript.messages[-1].text == first_shown

    # A fresh seed is still said under the reply, so the reply can be repeated.
    page.sampling.seed_edit.clear()
    fresh = _send(qtbot, window, "And another?")
    assert fresh.stats.seed is not None and f"seed {fresh.stats.seed}" in _figures(window)
    # Switching the sampler is per request: the pair was never loaded again.
    page.sampling.choice.setCurrentIndex(GREEDY_INDEX)
    _send(qtbot, window, "Now greedily.")
    assert loads == [] and page.bridge.state == READY


def test_greedy_is_the_engines_greedy_and_says_so(
    open_chat: OpenChat, qtbot: QtBot, tmp_path: Path
) -> None:
    window = open_chat(QWEN3_SAMPLING)
    page = window.chat_page
    page.sampling.choice.setCurrentIndex(GREEDY_INDEX)
    assert not page.sampling.seed_edit.isEnabled()
    assert page.sampling.note.text().startswith("Greedy (exact comparison)")
    shown = _send(qtbot, window, PROMPT)
    assert shown.stats.sampler == "greedy" and shown.stats.seed is None
    figures = _figures(window)
    assert "· speculative ·" in figures and figures.endswith("· greedy")
    assert "expected" not in figures

    target, draft = page.selection.target, page.selection.draft
    client = EngineClient()
    client.start()
    try:
        client.run(Load(target=str(target), draft=str(draft)), timeout=60)
        direct = client.run(
            Generate(
                messages=(ChatTurn("user", PROMPT),),
                mode=Mode.SPECULATIVE,
                max_tokens=TOKENS,
                sampler=None,
            ),
            timeout=60,
        )
    finally:
        client.close()
    assert shown.tokens == direct.tokens and shown.text == direct.text

    # The export names each reply's sampler and seed.
    page.export_json(tmp_path / "chat.json")
    reply = json.loads((tmp_path / "chat.json").read_text())["messages"][1]
    assert reply["sampler"] == "greedy" and reply["seed"] is None


def test_an_unreadable_sampler_is_said_inline_and_chat_is_greedy(
    open_chat: OpenChat, qtbot: QtBot
) -> None:
    window = open_chat({"sampler_type": "nonsense"})
    page = window.chat_page
    note = page.sampling.note.text()
    assert "Cannot read the sampler of" in note and "config.json" in note
    assert "unknown sampler" in note and "Replies are greedy" in note
    assert page.sampling.sampler() is None
    done = _send(qtbot, window, PROMPT)
    assert done.stats.sampler == "greedy"
    assert _figures(window).endswith("· greedy")
    assert _modal_boxes() == []


def test_the_switch_is_reached_by_tab_and_explains_itself(
    open_chat: OpenChat, qtbot: QtBot
) -> None:
    window = open_chat(QWEN3_SAMPLING)
    page = window.chat_page
    tab_stops: list[QWidget] = []
    widget = page.mode.nextInFocusChain()
    while widget is not None and widget is not page.highlight and len(tab_stops) < 50:
        if widget.isVisible() and widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
            tab_stops.append(widget)
        widget = widget.nextInFocusChain()
    # Tab from the mode goes to the sampler switch, then the seed.
    assert tab_stops == [page.sampling.choice, page.sampling.seed_edit]
    tip = page.sampling.choice.toolTip()
    assert "Greedy: the target's most likely token every time" in tip
    assert "keeps the target's distribution exactly" in tip

    page.grab().save("/tmp/chat_sampling.png")
    # Nothing in the options row is squeezed below what it needs to show itself.
    for w in (page.mode, page.sampling.choice, page.sampling.seed_edit, page.send_keys):
        assert w.width() >= w.minimumSizeHint().width()
    seed = page.sampling.seed_edit
    assert seed.width() > seed.fontMetrics().horizontalAdvance(seed.placeholderText())
    assert page.sampling.note.width() >= page.sampling.note.sizeHint().width()
