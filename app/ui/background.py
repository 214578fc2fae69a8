"""One small API for background work: run a function on Qt's thread pool, get the
result (or the error) back on the GUI thread through a signal."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger("draftdeck.ui.background")
_live: set[Task] = set()  # keeps tasks alive until their result is delivered


class Task(QObject):
    finished = Signal(object)
    failed = Signal(object)


class _Runnable(QRunnable):
    def __init__(self, task: Task, fn: Callable[[], Any]) -> None:
        super().__init__()
        self.task, self.fn = task, fn

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as exc:  # delivered to the caller's error slot, never lost
            log.debug("background task failed: %s", exc)
            self.task.failed.emit(exc)
        else:
            self.task.finished.emit(result)


def run_in_background(
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[Exception], None],
) -> Task:
    task = Task()
    _live.add(task)
    task.finished.connect(on_done)
    task.failed.connect(on_error)
    task.finished.connect(lambda _r: _live.discard(task))
    task.failed.connect(lambda _e: _live.discard(task))
    QThreadPool.globalInstance().start(_Runnable(task, fn))
    return task


def wait_for_background(timeout_ms: int = 10_000) -> bool:
    """Let running tasks finish (used at shutdown and by tests)."""
    return QThreadPool.globalInstance().waitForDone(timeout_ms)
