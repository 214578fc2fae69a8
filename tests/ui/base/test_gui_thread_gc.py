"""Garbage cycles are freed in the GUI thread only: a Qt object freed by a worker
thread's collection once froze the window (a Qt lock against the GIL)."""

from __future__ import annotations

import gc
import threading

from pytestqt.qtbot import QtBot

from app.ui.base.background import wait_for_background
from app.ui.shell.application import create_main_window

FREED_IN: list[threading.Thread] = []  # the thread that freed each Cycle


class Cycle:
    """Garbage only the cyclic collector frees."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        FREED_IN.append(threading.current_thread())


def _make_garbage_and_allocate() -> None:
    for _ in range(5):
        Cycle()
    # Far past the youngest generation's threshold: automatic collection would run here.
    kept: list[list[int]] = [[] for _ in range(50 * gc.get_threshold()[0])]
    assert kept


def test_cycles_are_freed_in_the_gui_thread_not_in_workers(qtbot: QtBot) -> None:
    window = create_main_window()
    qtbot.addWidget(window)
    try:
        FREED_IN.clear()
        worker = threading.Thread(target=_make_garbage_and_allocate)
        worker.start()
        worker.join()
        assert FREED_IN == []  # the worker never collected
        # Enough live objects that a collection is due (a freed object lowers the count
        # again), kept until the GUI thread's timer has collected.
        due: list[list[int]] = [[] for _ in range(2 * gc.get_threshold()[0])]
        qtbot.waitUntil(lambda: len(FREED_IN) == 5, timeout=30_000)
        assert due
        assert set(FREED_IN) == {threading.main_thread()}
    finally:
        window.close()
        wait_for_background()
