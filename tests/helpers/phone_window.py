"""The main window on its Phone page with one library pack and the fake phone listed, as
the Phone page's GUI tests use it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.phone.push import DONE
from app.ui.base.background import wait_for_background
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow
from tests.fake_phone import FakePhone

ROOT = "/data/local/tmp/mnn_models"  # the first destination preset


@contextmanager
def phone_window(qtbot: QtBot, bundle_copy: Callable[..., Path]) -> Iterator[MainWindow]:
    bundle_copy("fast-draft", app_dirs().default_library / "fast-draft")
    win = create_main_window()
    qtbot.addWidget(win)
    win.show()
    win.show_page("phone")
    page = win.phone_page
    qtbot.waitUntil(lambda: page.device_list.count() == 1, timeout=10_000)
    qtbot.waitUntil(lambda: page.pack_list.count() == 1, timeout=10_000)
    try:
        yield win
    finally:
        win.close()
        wait_for_background()


def start_slow_push(window: MainWindow, phone: FakePhone) -> Path:
    """Push the library's fast-draft, grown by 2 MB, over a slow cable: the push takes
    seconds, time to look at it or cancel it. The pack's folder."""
    pack = app_dirs().default_library / "fast-draft"
    with (pack / "llm.mnn.weight").open("ab") as handle:
        handle.write(bytes(2 * 1024 * 1024))
    phone.throttle_bytes_per_s = 300_000
    window.phone_page.pack_list.setCurrentRow(0)
    window.phone_page.push_button.click()
    return pack


def wait_done(qtbot: QtBot, window: MainWindow, row: int) -> None:
    model = window.phone_page.push_queue.model
    qtbot.waitUntil(
        lambda: model.rowCount() > row and model.status(row).state == DONE, timeout=20_000
    )
