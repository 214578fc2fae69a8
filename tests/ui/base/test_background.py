"""The background lanes hand answers to the GUI thread without a Qt object per answer: a
task's QObject released last by the pool thread (after its answer was delivered) was
destroyed off its own thread, and the heap was corrupted under load ("malloc(): unsorted
double linked list corrupted" in a GUI test)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from app.ui.base import background

WAIT_MS = 30_000  # a hang guard only


def _qobjects() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, QObject))


def test_answers_in_flight_hold_no_qt_object_a_worker_could_free(qtbot: QtBot) -> None:
    owner = QObject()
    gate = threading.Event()
    answers: list[int] = []
    before = _qobjects()

    def answer(i: int) -> Callable[[], int]:
        return lambda: i if gate.wait(WAIT_MS / 1000) else -1

    for i in range(8):
        background.run(owner, f"k{i}", answer(i), answers.append)
    in_flight = _qobjects()
    gate.set()
    qtbot.waitUntil(lambda: len(answers) == 8, timeout=WAIT_MS)
    assert in_flight == before  # nothing but Python objects carries the eight answers
    assert sorted(answers) == list(range(8))


def test_a_speaker_says_on_the_gui_thread_until_its_owner_closes(qtbot: QtBot) -> None:
    owner = QObject()
    heard: list[tuple[str, threading.Thread]] = []
    say = background.speaker(owner, lambda word: heard.append((word, threading.current_thread())))
    worker = threading.Thread(target=say, args=("first",))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: len(heard) == 1, timeout=WAIT_MS)
    assert heard == [("first", threading.main_thread())]
    background.close_owner(owner)
    done = threading.Event()

    def say_late() -> None:
        say("late")
        background.on_gui(done.set)  # queued behind the late word: once it runs, both have

    said_late = threading.Thread(target=say_late)
    said_late.start()
    said_late.join()
    qtbot.waitUntil(done.is_set, timeout=WAIT_MS)
    assert heard == [("first", threading.main_thread())]
