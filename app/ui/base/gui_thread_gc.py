"""Python's cyclic garbage collector runs only in the GUI thread.

A reference cycle that holds Qt objects (pyqtgraph's plots make them) is freed by
whichever thread happens to trigger a collection. Freed in a worker thread, ~QObject
took a Qt lock and waited for the GIL, while the GUI thread held the GIL and waited for
that lock: the window froze for good (seen under load, the engine's reader thread
collecting a closed chart's menu). So automatic collection is off, and a timer in the
GUI thread collects with Python's own thresholds: pyqtgraph's GarbageCollector idea,
which Anki uses too.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QTimer

TIMER_NAME = "draftdeck-gui-thread-gc"
INTERVAL_MS = 1000  # garbage waits at most this long; a check costs microseconds


def collect_in_gui_thread(app: QCoreApplication) -> QTimer:
    """Turn automatic collection off and collect on a GUI-thread timer (once a process)."""
    timer = app.findChild(QTimer, TIMER_NAME)
    if timer is None:
        timer = QTimer(app)
        timer.setObjectName(TIMER_NAME)
        timer.setInterval(INTERVAL_MS)
        timer.timeout.connect(collect_due)
        timer.start()
    gc.disable()
    return timer


def collect_due() -> None:
    """Collect each generation whose count passed its threshold, youngest first, as the
    automatic collector would have."""
    counts = gc.get_count()
    for generation, threshold in enumerate(gc.get_threshold()):
        if counts[generation] <= threshold:
            break
        gc.collect(generation)
