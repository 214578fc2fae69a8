"""Closing the window or switching pairs while work runs: nothing hangs, leaks or lands
in the wrong place."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from pytestqt.qtbot import QtBot

from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HubConfig
from app.core.hub.job import PLANNING, DownloadJob
from app.core.hub.manager import DownloadManager
from app.core.measure.tune_plan import recipe_defaults
from app.core.phone.desk import PhoneDesk
from app.engine.client.tune_sweeps import TuneSweeps
from app.ui.base.background import wait_for_background
from app.ui.base.engine_bridge import GENERATING, READY
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

Copy = Callable[..., Path]


def _engine_children() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "app.engine.worker" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def _wait_no_engines(timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _engine_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _engine_children()


def _window(qtbot: QtBot, bundle_copy: Copy, pairs: tuple[str, ...]) -> MainWindow:
    win = create_main_window()
    for name in pairs:
        bundle_copy(name, win.library.root / name, desktop=True)
    win.show()
    return win


def test_the_window_builds_each_service_once_and_hands_it_to_its_consumers(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: Counter[str] = Counter()
    for service in (Downloads, PhoneDesk, TuneSweeps):
        build = service.__init__

        def counted(
            self: object,
            *args: object,
            _build: Any = build,
            _name: str = service.__name__,
            **kwargs: object,
        ) -> None:
            built[_name] += 1
            _build(self, *args, **kwargs)

        monkeypatch.setattr(service, "__init__", counted)
    win = create_main_window()
    qtbot.addWidget(win)
    try:
        # A page that built its own would count twice, and hold another object.
        assert built == {"Downloads": 1, "PhoneDesk": 1, "TuneSweeps": 1}
        downloads = win.downloads_page
        assert downloads.downloads is win.downloads
        assert downloads.repo_details.downloads is downloads.queue.downloads is win.downloads
        phone = win.phone_page
        assert phone.desk is win.phone_desk
        assert phone.push_queue.desk is phone.destinations.desk is win.phone_desk
        assert win.tune_page.sweeps is win.tune_sweeps
        assert win.tune_page.queue is win.tune_sweeps.queue
    finally:
        win.close()
        wait_for_background()


def test_closing_does_not_wait_for_a_hub_that_never_answers(tmp_path: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    manager = DownloadManager()
    job = DownloadJob(
        "someone/pack",
        tmp_path,
        HubConfig(endpoint=f"http://127.0.0.1:{silent.getsockname()[1]}", token=False),
    )
    manager.submit(job)
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed limit
    while job.status().state != PLANNING:  # now waiting for the model info, forever
        assert time.monotonic() < deadline
        time.sleep(0.01)
    manager.shutdown(timeout=1.0)
    # It came back while its worker is still stuck on the silent Hub: it did not wait.
    workers = [t for t in threading.enumerate() if t.name.startswith("download")]
    assert any(t.is_alive() for t in workers)
    silent.close()  # let the stuck request fail so its thread ends
    for thread in workers:
        thread.join(30)


def test_closing_mid_sweep_stops_the_sweep_and_its_worker(qtbot: QtBot, bundle_copy: Copy) -> None:
    win = _window(qtbot, bundle_copy, ("fast-target", "fast-draft"))
    root = win.library.root
    win.show_page("pair")
    win.pair_page.choose(root / "fast-target", root / "fast-draft")
    win.show_page("tune")
    page = win.tune_page
    page.form.d_max.setValue(8)
    page.start_button.click()
    # The sweep runs on the window's service, the one the window's close stops.
    assert page.job is not None and page.job is win.tune_sweeps.job
    assert win.tune_sweeps.queue.jobs == [page.job]
    qtbot.waitUntil(lambda: page.model.rowCount() >= 1, timeout=60_000)
    win.close()
    assert wait_for_background(30_000)
    assert _wait_no_engines()


def test_apply_best_goes_to_the_measured_pair(qtbot: QtBot, bundle_copy: Copy) -> None:
    win = _window(
        qtbot, bundle_copy, ("fast-target", "fast-draft", "qwen3-target", "qwen3-draft-noisy")
    )
    root = win.library.root
    win.show_page("pair")
    win.pair_page.choose(root / "fast-target", root / "fast-draft")
    win.show_page("tune")
    page = win.tune_page
    page.form.tokens.setValue(32)
    page.form.budget.setValue(1)  # which pair gets the result is the subject, not the figures
    page.form.min_run.setValue(0.0)
    page.form.prompts.setPlainText("Tell me about rivers.")
    page.start_button.click()
    qtbot.waitUntil(lambda: page.model.rowCount() >= 1, timeout=60_000)
    win.show_page("pair")
    win.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    win.show_page("tune")
    assert not page.start_button.isEnabled()  # one sweep at a time
    qtbot.waitUntil(lambda: page.cancel_button.isEnabled() is False, timeout=120_000)
    other = (root / "qwen3-target" / "config.json").read_text()
    measured = (root / "fast-target" / "config.json").read_text()
    assert page.run is not None and page.run.target == str(root / "fast-target")
    refusal = page.apply_refusal(page.run)  # whether the figures allow it is measured
    page.apply_button.click()
    if refusal is None:
        box = page.confirm_box
        # The measured pair's files (which of them depends on what won here), never the
        # pair chosen since.
        assert "fast-target/" in box.text() or "fast-draft/" in box.text()
        assert "qwen3" not in box.text()
        next(b for b in box.buttons() if b.text() == "Apply").click()
        best = page.model.best
        assert best is not None
        # No phone chosen: the length best here is this computer's; the phone's recipe
        # stays as it was.
        applied = recipe_defaults(root / "fast-target", root / "fast-draft")
        assert applied["draft_length"] == best.setting.draft_length
        assert (root / "fast-target" / "config.json").read_text() == measured
    else:
        assert (root / "fast-target" / "config.json").read_text() == measured
    assert (root / "qwen3-target" / "config.json").read_text() == other
    win.close()
    wait_for_background()


def test_closing_while_the_engine_starts_leaves_no_worker(qtbot: QtBot, bundle_copy: Copy) -> None:
    win = _window(qtbot, bundle_copy, ("qwen3-target", "qwen3-draft-noisy"))
    root = win.library.root
    win.show_page("pair")
    win.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    win.show_page("chat")  # starts the engine in the background
    win.close()
    assert wait_for_background(30_000)
    assert _wait_no_engines()


def test_pair_change_waits_for_the_running_reply(qtbot: QtBot, bundle_copy: Copy) -> None:
    win = _window(
        qtbot, bundle_copy, ("qwen3-target", "qwen3-draft-noisy", "fast-target", "fast-draft")
    )
    root = win.library.root
    win.show_page("pair")
    win.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    win.show_page("chat")
    chat = win.chat_page
    qtbot.waitUntil(lambda: chat.bridge.state == READY, timeout=30_000)
    chat.max_tokens.setValue(20_000)
    chat.input.setPlainText("Keep going.")
    chat.send()
    qtbot.waitUntil(lambda: chat.bridge.state == GENERATING, timeout=10_000)
    win.show_page("pair")
    win.pair_page.choose(root / "fast-target", root / "fast-draft")
    win.show_page("chat")
    assert chat.bridge.state == GENERATING and chat.stop_button.isEnabled()
    chat.stop()
    qtbot.waitUntil(
        lambda: (
            chat.bridge.state == READY
            and chat.loaded_pair[0] is not None
            and chat.loaded_pair[0].name == "fast-target"
        ),
        timeout=30_000,
    )
    assert chat.transcript.messages == []  # a new pair, a new chat
    win.close()
    wait_for_background()
    assert _wait_no_engines()


@pytest.fixture(autouse=True)
def _no_engines_left() -> None:
    assert not _engine_children()
