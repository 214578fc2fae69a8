"""The Qt bridge to the engine: the verify agreement it measures after a load never
belongs to another pair and never makes a reply wait. Orders are forced through the
bridge's own signals (no timing), with the real worker on the fixture bundles."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.core.infra.settings import Settings
from app.ui.chat_page import ChatPage
from app.ui.engine_bridge import READY, EngineBridge
from app.ui.pair_selection import PairSelection

Fixture = Callable[[str], Path]
LOW = {"memory": "low", "thread_num": 1}
NORMAL = {"memory": "normal", "thread_num": 1}


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


def _pair(fixture_bundle: Fixture, recipe: dict[str, Any]) -> dict[str, Any]:
    return {
        "target": str(fixture_bundle("qwen3-target")),
        "draft": str(fixture_bundle("qwen3-draft-identical")),
        "target_config": recipe,
        "draft_config": recipe,
        "draft_length": 3,
    }


def test_a_new_pair_drops_the_old_pairs_agreement(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    shown: list[dict[str, Any]] = []
    bridge.agreement.connect(shown.append)

    def switch_once() -> None:
        bridge.agreement_started.disconnect(switch_once)
        bridge.load(**_pair(fixture_bundle, NORMAL))  # while the low pair's is pending

    bridge.agreement_started.connect(switch_once)
    bridge.load(**_pair(fixture_bundle, LOW))
    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    qtbot.waitUntil(lambda: bridge.agreement_id is None and bridge.state == READY)
    # Only the second pair's figure: memory normal verifies exactly, memory low does not.
    assert len(shown) == 1 and shown[0]["exact"] is True


def test_a_reply_goes_first_and_the_agreement_follows(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    shown: list[dict[str, Any]] = []
    finished: list[dict[str, Any]] = []
    bridge.agreement.connect(shown.append)
    bridge.finished.connect(finished.append)

    def send_once() -> None:
        bridge.agreement_started.disconnect(send_once)
        bridge.generate(prompt="Hello", max_tokens=8)

    bridge.agreement_started.connect(send_once)
    bridge.load(**_pair(fixture_bundle, LOW))
    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    assert len(finished) == 1  # the reply came back before the measurement
    assert len(shown) == 1 and shown[0]["checked"] == 64 and 0 < shown[0]["agreement"] < 1


def test_the_chat_says_where_the_agreement_is(qtbot: QtBot, fixture_bundle: Fixture) -> None:
    bridge = EngineBridge()
    page = ChatPage(PairSelection(Settings(), lambda _settings: None), bridge)
    qtbot.addWidget(page)
    page._loaded_pair = (fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical"))
    seen: list[str] = []

    def send_once() -> None:
        bridge.agreement_started.disconnect(send_once)
        seen.append(page.pair_label.text())
        page.input.setPlainText("Hello")
        page.send()
        seen.append(page.pair_label.text())

    bridge.agreement_started.connect(send_once)
    bridge.load(**_pair(fixture_bundle, LOW))
    qtbot.waitUntil(lambda: page.verify_agreement is not None, timeout=30_000)
    assert seen[0].endswith("measuring verify agreement…")
    assert seen[1].endswith("verify agreement after this reply")
    assert "an identical draft would reach about" in page.pair_label.text()
    bridge.shutdown()
