"""One way to run background work in the window.

`run(owner, key, fn, on_done, on_error)` calls `fn` on a worker thread and hands its
result (or exception) to `on_done` (or `on_error`) on the GUI thread, unless by then
- the owner has closed (its QObject was destroyed, or `close_owner` was called when
  the window closed), or
- a newer `run` with the same owner and key has started (the answer is stale: an old
  device listing never overwrites a newer one).
So no page checks whether it is still alive when an answer arrives.

`watch(owner, queue, on_change)` does the same for a job queue (downloads, pushes,
tune sweeps): the queue's jobs report every change from their threads, and the owner
hears about them on the GUI thread at most every `WATCH_MS`; nothing runs while the
jobs are idle.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

log = logging.getLogger("draftdeck.ui.background")

WATCH_MS = 100  # how often a watched queue's changes reach the window at most

# A worker busy in Python holds the GIL until the GUI thread has waited this long, and
# the GUI thread waits once for every call Qt makes into Python (a model's data(), an
# event filter): at Python's default 5 ms, a page painting while a library of 300 packs
# was judged took 1.5 s. At 0.5 ms the wait is a tenth, the worker's loss a few %.
GIL_SWITCH_S = 0.0005
sys.setswitchinterval(GIL_SWITCH_S)

_pool = QThreadPool()
_pool.setObjectName("draftdeck-background")
_pool.setMaxThreadCount(max(4, QThreadPool.globalInstance().maxThreadCount()))


class _Owner:
    """What the lanes know about an owner: whether it closed, and each key's latest task."""

    def __init__(self) -> None:
        self.closed = False
        self.latest: dict[str, Task] = {}
        self.watchers: list[_Watcher] = []


_owners: dict[int, _Owner] = {}


def _state(owner: QObject) -> _Owner:
    state = _owners.get(id(owner))
    if state is None:
        owner_id = id(owner)  # not the owner itself: that would keep it alive
        state = _owners[owner_id] = _Owner()
        owner.destroyed.connect(lambda *_: close_owner_id(owner_id))
    return state


def close_owner(owner: QObject) -> None:
    """Drop every answer still on its way to `owner` (the window is closing)."""
    close_owner_id(id(owner))


def close_owner_id(owner_id: int) -> None:
    state = _owners.pop(owner_id, None)
    if state is not None:
        state.closed = True
        state.latest.clear()
        for watcher in state.watchers:
            watcher.stop()


class _Relay(QObject):
    """The one QObject that other threads emit on. It lives as long as the program, on
    the GUI thread, so no other thread ever holds the last reference to a QObject: a
    task's QObject released by the pool thread after its answer was delivered was
    destroyed off its own thread, and the heap was corrupted under load."""

    call = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.call.connect(self._call)  # queued when emitted on another thread

    def _call(self, fn: Callable[[], None]) -> None:
        fn()


_relay = _Relay()


def on_gui(fn: Callable[[], None]) -> None:
    """Call `fn` on the GUI thread (now, when already there). Any thread."""
    _relay.call.emit(fn)


def speaker(owner: QObject, fn: Callable[..., None]) -> Callable[..., None]:
    """A callable for another thread: each call runs `fn` with its arguments on the GUI
    thread, unless `owner` has closed by then (what a job says as its dialog goes lands
    nowhere)."""
    state = _state(owner)

    def say(*args: Any) -> None:
        on_gui(lambda: None if state.closed else fn(*args))

    return say


class Task:
    """One run: delivers on the GUI thread, if its owner still wants it."""

    def __init__(
        self,
        state: _Owner,
        key: str,
        on_done: Callable[[Any], None],
        on_error: Callable[[Exception], None],
    ) -> None:
        self._state, self._key = state, key
        self._on_done, self._on_error = on_done, on_error

    def wanted(self) -> bool:
        return not self._state.closed and self._state.latest.get(self._key) is self

    def _settle(self) -> bool:
        wanted = self.wanted()
        if self._state.latest.get(self._key) is self:
            del self._state.latest[self._key]
        return wanted

    def deliver_result(self, result: object) -> None:
        if self._settle():
            self._on_done(result)

    def deliver_error(self, error: Exception) -> None:
        if self._settle():
            self._on_error(error)


class _Runnable(QRunnable):
    def __init__(self, task: Task, fn: Callable[[], Any]) -> None:
        super().__init__()
        self.task, self.fn = task, fn

    def run(self) -> None:
        task = self.task
        try:
            result = self.fn()
        except Exception as exc:  # delivered to the owner's error slot, never lost
            log.debug("background task failed: %s", exc)
            error = exc  # `exc` is unbound once the except block ends
            on_gui(lambda: task.deliver_error(error))
        else:
            on_gui(lambda: task.deliver_result(result))


def _log_error(error: Exception) -> None:
    log.warning("background task failed: %s", error)


def run(
    owner: QObject,
    key: str,
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[Exception], None] = _log_error,
) -> Task:
    """Run `fn` off the GUI thread for `owner`; a later run with the same key makes
    this one's answer stale. Call from the GUI thread."""
    state = _state(owner)
    task = Task(state, key, on_done, on_error)
    state.latest[key] = task
    _pool.start(_Runnable(task, fn))
    return task


def is_running(owner: QObject, key: str) -> bool:
    """Whether an answer for (owner, key) is still to come."""
    state = _owners.get(id(owner))
    return state is not None and key in state.latest


def drop(owner: QObject, key: str) -> None:
    """The answer still to come for (owner, key) is no longer wanted: the owner just
    did the same work itself (the task runs on, unheard)."""
    state = _owners.get(id(owner))
    if state is not None:
        state.latest.pop(key, None)


def wait_for_background(timeout_ms: int = 10_000) -> bool:
    """Let running tasks finish (used at shutdown and by tests)."""
    return _pool.waitForDone(timeout_ms)


class WatchedQueue(Protocol):
    def subscribe(self, on_change: Callable[[], None]) -> Callable[[], None]: ...


class _Watcher:
    """Turns a queue's change reports (any thread) into at most one call per WATCH_MS
    on the GUI thread. A job thread may still report to it just after its owner is
    gone, so it lives as long as anyone holds it, and goes quiet."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change: Callable[[], None] | None = on_change
        self._pending = threading.Event()
        self.unsubscribe: Callable[[], None] = lambda: None

    def notify(self) -> None:  # any thread
        if not self._pending.is_set():
            self._pending.set()
            on_gui(self._schedule)

    def _schedule(self) -> None:
        # A lambda, not the bound method: PySide keeps a bound method's object only
        # weakly here, and a watcher stopped meanwhile was then called after it was freed.
        QTimer.singleShot(WATCH_MS, _relay, lambda: self._fire())

    def _fire(self) -> None:
        self._pending.clear()
        if self._on_change is not None:
            self._on_change()

    def stop(self) -> None:
        self._on_change = None
        self.unsubscribe()
        _watchers.discard(self)


_watchers: set[_Watcher] = set()


def watch(owner: QObject, queue: WatchedQueue, on_change: Callable[[], None]) -> None:
    """Call `on_change` on the GUI thread after the queue's jobs change, coalesced,
    until the owner is destroyed or closed with `close_owner`."""
    watcher = _Watcher(on_change)
    watcher.unsubscribe = queue.subscribe(watcher.notify)
    _watchers.add(watcher)
    _state(owner).watchers.append(watcher)
