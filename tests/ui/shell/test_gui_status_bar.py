"""The status bar: messages that time out, problems that do not follow the user to
another page, labelled machine figures, and Ctrl+L saying where a folder is when no
file manager opens it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.core.infra.system_figures import system_figures
from app.ui.base.background import wait_for_background
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    win = create_main_window()
    qtbot.addWidget(win)
    win.show()
    win.show_page("library")
    yield win
    win.close()
    wait_for_background()


def test_messages_time_out_and_a_problem_leaves_with_its_page(
    window: MainWindow, qtbot: QtBot
) -> None:
    bar = window.statusBar()
    window.info_ms = 50  # the real times are 10 s and 30 s; the mechanism is the same
    window.library_page.message.emit("Imported a pack")
    assert bar.currentMessage() == "Imported a pack"
    qtbot.waitUntil(lambda: bar.currentMessage() == "", timeout=10_000)

    window.show_page("downloads")
    window.downloads_page.problem.emit("Download of a/b failed: no connection")
    assert bar.currentMessage() == "Download of a/b failed: no connection"
    window.show_page("chat")  # another page: the problem is not its own
    assert bar.currentMessage() == ""

    window.problem_ms = 50
    window.phone_page.problem.emit("Push of x failed")
    qtbot.waitUntil(lambda: bar.currentMessage() == "", timeout=10_000)

    # A message shown after a problem is not cleared by a later page change.
    window.phone_page.problem.emit("Push of y failed")
    window.info_ms = 60_000
    window.library_page.message.emit("Deleted z")
    window.show_page("library")
    assert bar.currentMessage() == "Deleted z"


def test_the_cpu_figure_says_it_is_the_whole_system(window: MainWindow) -> None:
    figures = system_figures(None)
    assert figures.startswith("CPU (system) ") and figures.endswith("%")
    assert "whole machine" in window.facts_label.toolTip()


# Qt says the same in its log; the user hears it in the status bar.
@pytest.mark.qt_log_ignore("does not support QPlatformServices::openDocument")
def test_ctrl_l_without_a_file_manager_says_where_the_pack_is(
    window: MainWindow, qtbot: QtBot, bundle_copy: Copy
) -> None:
    # The offscreen platform, like a machine without a file manager, opens nothing.
    pack = bundle_copy("fast-draft", window.library.root / "fast-draft")
    page = window.library_page
    page.refresh()
    qtbot.waitUntil(lambda: page.proxy.rowCount() == 1, timeout=10_000)
    page.select_path(pack)
    page.activateWindow()
    page.setFocus()
    QTest.keyClick(page, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    message = window.statusBar().currentMessage()
    assert message == f"No file manager opened the folder; open it by hand: {pack}"
