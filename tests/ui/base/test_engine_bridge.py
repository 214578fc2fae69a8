"""The Qt bridge to the engine: the verify agreement it measures after a load never
belongs to another pair and never makes a reply wait. Orders are forced through the
pair state the bridge publishes (no timing), with the real worker on the fixture bundles."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from app.core.infra.settings import Settings
from app.core.measure.verify_agreement import VerifyAgreement
from app.engine.protocol import Done, Generate, Load
from app.ui.base import background
from app.ui.base.engine_bridge import CRASHED, ERROR, READY, STOPPED, EngineBridge
from app.ui.base.pair_selection import PairSelection
from app.ui.base.pair_state import PairState
from app.ui.chat.chat_page import ChatPage

Fixture = Callable[[str], Path]
LOW = {"memory": "low", "thread_num": 1}
NORMAL = {"memory": "normal", "thread_num": 1}


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


class Published:
    """What the bridge publishes, as these tests need it: each verify agreement newly
    measured, and a hook run once at the moment a measurement starts."""

    def __init__(self, bridge: EngineBridge) -> None:
        self.agreements: list[VerifyAgreement] = []
        self.when_measuring: Callable[[], object] | None = None
        self._last = bridge.pair_state
        bridge.pair_changed.connect(self._on_pair)

    def _on_pair(self, state: PairState) -> None:
        last, self._last = self._last, state
        if state.agreement is not None and state.agreement is not last.agreement:
            self.agreements.append(state.agreement)
        if state.measuring and not last.measuring and self.when_measuring is not None:
            hook, self.when_measuring = self.when_measuring, None
            hook()


def _pair(fixture_bundle: Fixture, recipe: dict[str, Any]) -> Load:
    return Load(
        target=str(fixture_bundle("qwen3-target")),
        draft=str(fixture_bundle("qwen3-draft-identical")),
        target_config=recipe,
        draft_config=recipe,
        draft_length=3,
    )


def test_a_new_pair_drops_the_old_pairs_agreement(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    published = Published(bridge)
    # While the low pair's measurement is pending:
    published.when_measuring = lambda: bridge.load(_pair(fixture_bundle, NORMAL))
    bridge.load(_pair(fixture_bundle, LOW))
    qtbot.waitUntil(lambda: bool(published.agreements), timeout=30_000)
    qtbot.waitUntil(lambda: bridge.agreement_id is None and bridge.state == READY)
    # Only the second pair's figure: memory normal verifies exactly, memory low does not.
    assert len(published.agreements) == 1 and published.agreements[0].exact is True


def test_a_reply_goes_first_and_the_agreement_follows(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    published = Published(bridge)
    finished: list[Done] = []
    bridge.finished.connect(finished.append)
    published.when_measuring = lambda: bridge.generate(Generate(prompt="Hello", max_tokens=8))
    bridge.load(_pair(fixture_bundle, LOW))
    qtbot.waitUntil(lambda: bool(published.agreements), timeout=30_000)
    assert len(finished) == 1  # the reply came back before the measurement
    (measured,) = published.agreements
    assert measured.checked == 64 and 0 < measured.agreement < 1


def test_the_chat_says_where_the_agreement_is(qtbot: QtBot, fixture_bundle: Fixture) -> None:
    bridge = EngineBridge()
    page = ChatPage(PairSelection(Settings(), lambda _settings: None), bridge)
    qtbot.addWidget(page)
    seen: list[str] = []
    published = Published(bridge)  # connected after the page: the page has drawn first

    def send_once() -> None:
        seen.append(page.pair_label.text())
        page.input.setPlainText("Hello")
        page.send()
        seen.append(page.pair_label.text())

    published.when_measuring = send_once
    bridge.load(_pair(fixture_bundle, LOW))
    qtbot.waitUntil(lambda: page.verify_agreement is not None, timeout=30_000)
    # The pair is the first line (a memory: low note may follow it).
    assert seen[0].splitlines()[0].endswith("measuring verify agreement…")
    assert seen[1].splitlines()[0].endswith("verify agreement after this reply")
    # An estimate with its 95 % range, as bench and tune say it, never "would reach".
    assert "(an identical draft: an estimated " in page.pair_label.text()
    assert "95 % range" in page.pair_label.text()
    bridge.shutdown()


def test_an_idle_bridge_has_no_timer_yet_notices_a_worker_dying_at_once(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    crashes: list[str] = []
    bridge.crashed.connect(crashes.append)
    bridge.load(_pair(fixture_bundle, NORMAL))
    qtbot.waitUntil(lambda: bridge.state == READY and bridge.agreement_id is None, timeout=30_000)
    finished: list[Done] = []
    bridge.finished.connect(finished.append)
    bridge.generate(Generate(prompt="Hello", max_tokens=8))
    qtbot.waitUntil(lambda: bool(finished), timeout=30_000)
    # Events arrive as cues from the reader thread: nothing ticks while idle.
    assert not [timer for timer in bridge.findChildren(QTimer) if timer.isActive()]
    bridge.client.kill()  # dies while nothing is pending
    qtbot.waitUntil(lambda: bridge.state == CRASHED, timeout=10_000)
    assert crashes
    assert sys.platform == "win32" or "killed by SIGKILL" in crashes[0]


def test_a_worker_that_starts_after_shutdown_is_closed(
    qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    bridge = EngineBridge()
    bridge.load(_pair(fixture_bundle, NORMAL))  # starts the worker in the background
    bridge.shutdown()  # before it is ready
    assert background.wait_for_background(30_000)
    assert not bridge.client.running
    assert bridge.state == STOPPED


def test_a_blocked_pair_is_refused_without_a_worker_also_on_restart(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    published: list[PairState] = []
    bridge.pair_changed.connect(published.append)
    target = str(fixture_bundle("qwen3-target"))
    blocked = Load(target=target, draft=str(fixture_bundle("qwen35-draft")))
    bridge.load(blocked)
    known = bridge.pair_state
    assert bridge.state == ERROR and bridge.client.pid is None  # the engine never asked
    assert known.blocked.startswith("This pair cannot work:") and known.error == known.blocked
    assert not known.alone and bridge.load_request is None
    bridge.restart()  # the replay goes through the plan too
    assert bridge.state == ERROR and bridge.client.pid is None
    bridge.load(blocked, alone_if_blocked=True)
    qtbot.waitUntil(lambda: bridge.state == READY, timeout=30_000)
    known = bridge.pair_state
    assert bridge.load_request == Load(target=target)
    assert known.alone and known.loaded is not None and known.loaded.draft is None
    assert known.error == "" and known.pair == (Path(target), Path(blocked.draft or ""))
    assert published[-1] is known  # every change was published, the last one as it is


def test_a_restart_drops_the_last_loads_facts_until_the_new_load_says_them(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    # The same pair, its recipe possibly edited meanwhile: the old agreement must not be
    # shown (nor saved with a reply) before the new load measures its own.
    bridge.load(_pair(fixture_bundle, NORMAL))
    qtbot.waitUntil(lambda: bridge.pair_state.agreement is not None, timeout=30_000)
    published: list[PairState] = []
    bridge.pair_changed.connect(published.append)
    bridge.restart()
    qtbot.waitUntil(lambda: bridge.pair_state.agreement is not None, timeout=30_000)
    first_loaded = next(i for i, s in enumerate(published) if s.loaded is not None)
    assert any(s.loaded is None and s.agreement is None for s in published[:first_loaded])
    assert all(s.agreement is None for s in published[:first_loaded])


def test_a_reload_that_fails_shows_none_of_the_last_loads_facts(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture, tmp_path: Path
) -> None:
    for name in ("qwen3-target", "qwen3-draft-identical"):
        shutil.copytree(fixture_bundle(name), tmp_path / name)
    pair = _pair(lambda name: tmp_path / name, NORMAL)
    bridge.load(pair)
    qtbot.waitUntil(lambda: bridge.pair_state.agreement is not None, timeout=30_000)
    (tmp_path / "qwen3-target" / "llm.mnn").write_bytes(b"not a model")
    bridge.restart()
    qtbot.waitUntil(lambda: bridge.state in (ERROR, CRASHED), timeout=30_000)
    known = bridge.pair_state
    assert known.error and known.pair == (
        tmp_path / "qwen3-target",
        tmp_path / "qwen3-draft-identical",
    )
    assert known.loaded is None and known.agreement is None
