"""What the GUI benchmarks watch in a live window: when a widget was painted, how late a
5 ms timer runs (how long the GUI thread was blocked), and spinning the event loop until
something holds. Qt is imported here, so import this after choosing the Qt platform."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget


class PaintWatch(QObject):
    """When `widget` was first painted once `ready()` holds (perf_counter), or None."""

    def __init__(self, widget: QWidget, ready: Callable[[], bool] = lambda: True) -> None:
        super().__init__()
        self.at: float | None = None
        self.ready = ready
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.at is None and self.ready():
            self.at = time.perf_counter()
        return False


class Lateness:
    """Each lateness of a 5 ms timer (ms) between start() and stop()."""

    def __init__(self) -> None:
        self.clock, self.timer = QElapsedTimer(), QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.last, self.late = 0.0, [0.0]

    def start(self) -> None:
        self.clock.start()
        self.last, self.late = 0.0, [0.0]
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed() / 1e6
        if self.last:
            self.late.append(max(0.0, now - self.last - 5.0))
        self.last = now

    def stop(self) -> tuple[float, float]:
        """The longest lateness and the 99th percentile (ms)."""
        self.timer.stop()
        late = sorted(self.late)
        return late[-1], late[min(len(late) - 1, int(len(late) * 0.99))]


def spin_until(done: Callable[[], bool], timeout: float = 300.0) -> None:
    """Run the event loop until `done()`; a benchmark that waits longer has failed."""
    app = QApplication.instance()
    assert app is not None
    deadline = time.monotonic() + timeout
    while not done():
        app.processEvents()
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.001)
