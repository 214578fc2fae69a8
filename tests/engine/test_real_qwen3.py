"""The real Qwen3 tokenizer (vocabulary 151,936) end to end: the committed qwen3-realtok
fixture answers any chat prompt with a fixed <think> chain (tests/fixtures/README.md),
so what the user sees can be checked exactly, through the real engine and window."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Decode, Encode, Generate, Load
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import chat_window, send

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
THOUGHT = "\nOkay, a short answer is enough.\n"
ANSWER = "\n\nHello! 你好 👋"
PROMPTS = {
    "chinese": "请用一句话介绍一下长城。",
    "emoji": "Rate this: 🚀🔥👍🏽 and 🇯🇵 — and café, naïve, Ωmega",
    "code": "def f(x):\n\treturn {'a': [x ** 2 for x in range(3)]}  # ≠ 0\r\n",
}


@pytest.mark.parametrize("kind", sorted(PROMPTS))
def test_prompts_round_trip_through_the_real_tokenizer(
    kind: str, client: EngineClient, fixture_bundle: Fixture
) -> None:
    """MNN's encoder and our decoder agree on the text; the (fixed) reply streams as valid
    UTF-8 whatever the prompt."""
    client.run(Load(target=str(fixture_bundle("qwen3-realtok")), target_config={}))
    prompt = PROMPTS[kind]
    ids = client.run(Encode(text=prompt)).tokens
    assert max(ids) >= 1000  # real BPE ranks, not bytes
    assert client.run(Decode(tokens=tuple(ids))).text == prompt
    done = client.run(Generate(prompt=prompt, max_tokens=64))
    assert done.text == f"<think>{THOUGHT}</think>{ANSWER}"
    assert "\ufffd" not in done.text


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    def realtok(_name: str, dest: Path, desktop: bool = False) -> Path:
        return bundle_copy("qwen3-realtok", dest, desktop=desktop)  # target and draft alike

    pair = ("qwen3-realtok", "realtok-as-draft")
    with chat_window(qtbot, realtok, pair, greedy=False) as win:
        yield win


def test_chat_folds_the_thinking_of_a_real_qwen3_reply(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    send(qtbot, window, "Hi there!")
    reply = page.transcript.messages[-1]
    assert reply.stopped_by == "stop_token"  # <|endoftext|> ends it, not the token limit
    assert reply.thinking_text == THOUGHT and reply.text == ANSWER
    shown = page.transcript.toPlainText()
    assert "▸ Thinking" in shown and "Okay, a short answer" not in shown  # folded
    assert "Hello! 你好 👋" in shown
    # An identical draft of an exact recipe: every drafted token accepted.
    assert reply.stats is not None and reply.stats["acceptance"] == 1.0
