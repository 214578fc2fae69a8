"""A stuck worker (SIGSTOP, a deadlock) is killed and reported; a busy one is not (issue 18)."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.engine.client.engine_client import EngineClient, EngineUnresponsive
from app.engine.protocol import PROTOCOL_VERSION, Generate, Load, Ping, Pong, Ready, encode_event
from app.ui.base.background import wait_for_background
from app.ui.base.engine_bridge import CRASHED, GENERATING, READY, EngineBridge
from app.ui.shell.application import create_main_window

Fixture = Callable[[str], Path]
NORMAL = {"memory": "normal", "thread_num": 1}
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")

# A stand-in worker that gets ready, then answers a ping only after `work` (run once).
STAND_IN = """
import json, sys, time
print({ready!r}, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    {work}
    pong = dict(json.loads({pong!r}), id=request["id"])
    print(json.dumps(pong), flush=True)
"""


def _stand_in(work: str, stall_seconds: float) -> EngineClient:
    script = STAND_IN.format(
        ready=encode_event(Ready(1, PROTOCOL_VERSION)), pong=encode_event(Pong()), work=work
    )
    return EngineClient([sys.executable, "-c", script], stall_seconds=stall_seconds)


def _load(fixture_bundle: Fixture) -> Load:
    return Load(
        target=str(fixture_bundle("qwen3-target")),
        draft=str(fixture_bundle("qwen3-draft-noisy")),
        target_config=NORMAL,
        draft_config=NORMAL,
        draft_length=3,
    )


@posix_only
def test_a_stopped_worker_is_killed_and_reported(fixture_bundle: Fixture) -> None:
    with EngineClient(stall_seconds=60) as client:
        client.run(_load(fixture_bundle), timeout=60)
        request = client.send(Generate(prompt="Go on.", max_tokens=10**6, ignore_stop=True))
        pid = client.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        with pytest.raises(EngineUnresponsive) as caught:
            client.wait(request, timeout=120)  # a guard: the watchdog must trip first
        # Stopped is stuck at once, not after the 60 s stall bound: the message says
        # SIGSTOP, which only the stopped-process check writes.
        assert caught.value.code == "unresponsive"
        assert "stopped responding" in caught.value.message and "SIGSTOP" in caught.value.message
        assert not client.running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # the stopped worker is gone, not left behind
        # A fresh worker once the pair is loaded again (the caller's to ask: the client
        # replays nothing, the window's bridge does).
        client.run(_load(fixture_bundle), timeout=60)
        done = client.run(Generate(prompt="Hello", max_tokens=5), timeout=60)
        assert len(done.tokens) <= 5


def test_a_worker_that_hangs_without_working_is_killed_after_the_stall_bound() -> None:
    with _stand_in("time.sleep(3600)", stall_seconds=1.5) as client:
        started = time.monotonic()
        with pytest.raises(EngineUnresponsive) as caught:
            client.run(Ping(), timeout=60)
        # Not before the stall bound (a lower bound a slow machine only raises).
        assert time.monotonic() - started >= 1.5
        assert "no progress for 1.5 s" in caught.value.message
        assert not client.running


def test_a_busy_worker_without_events_is_not_killed() -> None:
    # Like a long prefill: no event for 4 s, but CPU time advancing all along.
    busy = "end = time.monotonic() + 4\n    while time.monotonic() < end: pass"
    with _stand_in(busy, stall_seconds=1.0) as client:
        assert isinstance(client.run(Ping(), timeout=60), Pong)
        assert client.running


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    made = EngineBridge(lambda: EngineClient(stall_seconds=60))
    yield made
    made.shutdown()


@posix_only
def test_chat_leaves_generating_when_the_worker_is_stopped(
    bridge: EngineBridge, qtbot: QtBot, fixture_bundle: Fixture
) -> None:
    crashes: list[str] = []
    bridge.crashed.connect(crashes.append)
    bridge.load(_load(fixture_bundle))
    qtbot.waitUntil(lambda: bridge.state == READY and bridge.agreement_id is None, timeout=60_000)
    bridge.generate(Generate(prompt="Go on.", max_tokens=10**6, ignore_stop=True))
    assert bridge.state == GENERATING
    pid = bridge.client.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    qtbot.waitUntil(lambda: bridge.state == CRASHED, timeout=15_000)
    assert crashes and "stopped responding" in crashes[0]
    assert not bridge.client.running


@posix_only
def test_chat_offers_restart_when_the_worker_is_stopped(
    qtbot: QtBot, bundle_copy: Callable[..., Path]
) -> None:
    win = create_main_window()
    root = win.library.root
    for name in ("qwen3-target", "qwen3-draft-noisy"):
        bundle_copy(name, root / name, desktop=True)
    qtbot.addWidget(win)
    win.show()
    win.show_page("pair")
    win.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    win.show_page("chat")
    page = win.chat_page
    try:
        qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
        page.max_tokens.setValue(20_000)
        page.input.setPlainText("Talk for a long time.")
        qtbot.keyClick(page.input, Qt.Key.Key_Return)  # type: ignore[no-untyped-call]
        qtbot.waitUntil(lambda: page.bridge.state == GENERATING, timeout=30_000)
        pid = page.bridge.client.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        qtbot.waitUntil(lambda: page.bridge.state == CRASHED, timeout=15_000)
        assert "Generating" not in page.state_label.text()
        # Killed by the watchdog, not crashed by itself: the words say which.
        assert "Engine stopped responding" in page.state_label.text()
        assert page.restart_button.isVisible()
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
        shown = [b for b in boxes if b.isVisible() and "stopped responding" in b.text()]
        assert [b.windowTitle() for b in shown] == ["The engine stopped responding"]
        for box in boxes:
            box.close()
        page.restart_button.click()
        qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    finally:
        win.close()
        wait_for_background()
