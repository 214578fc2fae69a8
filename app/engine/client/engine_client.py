"""Talk to the engine worker: request ids, sending, waiting, events. No Qt: the GUI
wraps it in signals. The process itself (spawn, readers, stderr tail, watchdog, kill,
close, what its end means) is a WorkerProcess (worker_process.py).

Events (protocol.py) arrive on a reader thread and are queued; `run()` sends one
request and waits for its final event, handing batches of rounds to a callback. Events of other
requests met while waiting are kept for their own `wait()`. If the worker dies, the
waiting call raises EngineCrashed with the exit signal and the last lines it wrote to
stderr; the next request starts a fresh worker, with no pair loaded (the caller loads
again: the GUI's EngineBridge replays its last load on Restart).
A worker that stops answering (SIGSTOP, a native deadlock) is found by a Watchdog
(watchdog.py) while a request is pending, killed, and reported as EngineUnresponsive.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from app.core.infra.errors import EngineCrashed, EngineError
from app.engine.client.watchdog import DEFAULT_STALL_SECONDS

# EngineUnresponsive is raised to this module's callers: they import it from here.
from app.engine.client.worker_process import EngineUnresponsive as EngineUnresponsive
from app.engine.client.worker_process import WorkerProcess, describe_exit, worker_command
from app.engine.load_rules import planned
from app.engine.protocol import (
    Cancel,
    Event,
    Exit,
    Failed,
    FailureCode,
    Load,
    Loaded,
    Request,
    Rounds,
    encode_request,
    reply_type,
)

log = logging.getLogger("draftdeck.engine.client")

ReplyT = TypeVar("ReplyT")
OnRounds = Callable[[Rounds], None]
READY_SECONDS = 60.0  # MNN's import takes a second or so; a cold disk far longer


class EngineClient:
    def __init__(
        self,
        command: list[str] | None = None,
        stall_seconds: float = DEFAULT_STALL_SECONDS,
        ready_seconds: float = READY_SECONDS,
    ) -> None:
        self._command = command or worker_command()
        self.stall_seconds = stall_seconds
        self.ready_seconds = ready_seconds
        self._worker: WorkerProcess | None = None
        self._unclaimed: dict[int | None, list[Event]] = {}
        self._ids = itertools.count(1)
        # Called on the reader thread after each event is queued (an event loop's cue
        # to call poll_events); None: nobody is told.
        self.on_event: Callable[[], None] | None = None
        # interrupt(): the last request sent, and whether every request is stopped as
        # sent, under one lock so that a request sent as the interrupt comes is stopped
        # by one of the two (by both at worst: a second Cancel of it is harmless).
        self._stop_lock = threading.Lock()
        self._last_sent: int | None = None
        self._interrupted = False

    # -- process ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._worker.pid if self._worker is not None else None

    @property
    def exit_code(self) -> int | None:
        """The worker's exit code once it has ended (None while it runs, or never ran)."""
        return self._worker.exit_code if self._worker is not None else None

    @property
    def running(self) -> bool:
        return self._worker is not None and self._worker.running

    def start(self) -> None:
        if self.running:
            return
        self._release()
        self._unclaimed = {}
        worker = WorkerProcess(self._command, self.stall_seconds, self._notify)
        worker.wait_ready(self.ready_seconds)  # released and raised when it is not
        self._worker = worker

    def _notify(self) -> None:
        listener = self.on_event
        if listener is not None:
            try:
                listener()
            except RuntimeError:  # a listener torn down mid-call must not stop the reader
                log.debug("event listener gone", exc_info=True)

    def kill_if_stuck(self) -> bool:
        """Kill the worker if the watchdog finds it stuck (call while a request is
        pending); its Exit event then raises or reports EngineUnresponsive."""
        return self._worker is not None and self._worker.kill_if_stuck()

    def kill(self, sig: int | None = None) -> None:
        """Kill the worker (`sig`: tests send SIGSEGV to stand for a native crash)."""
        if self._worker is not None:
            self._worker.kill(sig)

    def close(self, timeout: float = 5.0) -> None:
        if self._worker is not None:
            self._worker.close(timeout)
            self._worker = None

    def _release(self) -> None:
        if self._worker is not None:
            self._worker.release()
            self._worker = None

    def crash_error(self, exit_event: Exit) -> EngineCrashed:
        """What the worker's Exit means (an Exit from poll_events)."""
        if self._worker is None:  # closed meanwhile: nothing more to tell
            message = f"The engine worker {describe_exit(exit_event.code)}."
            return EngineCrashed(message, exit_event.code, [])
        return self._worker.crash_error(exit_event)

    # -- requests --------------------------------------------------------------------------

    def _running_worker(self) -> WorkerProcess:
        if self._worker is None:
            raise EngineError("the engine is not running", FailureCode.NOT_RUNNING)
        return self._worker

    def send(self, request: Request[ReplyT]) -> int:
        """Send a request without waiting; returns its id."""
        if not self.running:
            self.start()
        worker = self._running_worker()
        request_id = next(self._ids)
        worker.request_sent()
        with self._stop_lock:
            self._last_sent = request_id
            interrupted = self._interrupted
        try:
            worker.write(encode_request(request, request_id))
        except OSError:
            raise worker.crash_error(worker.drain_to_exit()) from None
        if interrupted:
            self.cancel(request_id)
        return request_id

    def interrupt(self) -> None:
        """From any thread: stop the request under way now and every one sent until
        `resume()` (a generation ends cancelled within a round, a verify check between
        two forwards; a load runs to its end). A sweep's Cancel stops at once so, rather
        than after the generations of the run it lands in (once 30 s)."""
        with self._stop_lock:
            self._interrupted = True
            last = self._last_sent
        if last is not None:
            self.cancel(last)

    def resume(self) -> None:
        """Requests sent from now on run again (after `interrupt`)."""
        with self._stop_lock:
            self._interrupted = False

    def cancel(self, request_id: int | None = None) -> None:
        """Stop a generation (the one running, or request_id even before it starts).

        It ends with stopped_by CANCELLED.
        """
        if self._worker is not None and self._worker.running:
            with contextlib.suppress(OSError):
                self._worker.write(encode_request(Cancel(request_id)))

    def wait(
        self,
        request_id: int,
        on_rounds: OnRounds | None = None,
        timeout: float | None = None,
    ) -> Event:
        """Wait for the final event of a request; raises EngineError or EngineCrashed
        (EngineUnresponsive when the worker got stuck and was killed)."""
        worker = self._running_worker()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            kept = self._unclaimed.get(request_id)
            event = kept.pop(0) if kept else worker.watched_event(deadline)
            if isinstance(event, Exit):
                raise worker.crash_error(event)
            if event.id != request_id:
                # Another request's event: keep it for that request's wait().
                self._unclaimed.setdefault(event.id, []).append(event)
                continue
            if isinstance(event, Rounds):
                if on_rounds is not None:
                    on_rounds(event)
                continue
            self._unclaimed.pop(request_id, None)
            if isinstance(event, Failed):
                raise EngineError(event.message, event.code, list(event.reasons))
            return event

    def run(
        self,
        request: Request[ReplyT],
        on_rounds: OnRounds | None = None,
        timeout: float | None = None,
    ) -> ReplyT:
        """Send `request` and wait for its reply."""
        event = self.wait(self.send(request), on_rounds, timeout)
        expected = reply_type(request)
        if not isinstance(event, expected):
            raise EngineError(
                f"the engine answered {type(request).__name__} with {type(event).__name__}",
                FailureCode.BAD_EVENT,
            )
        return event

    def load(self, request: Load) -> Loaded:
        """Load a pair once its load plan agrees: one the engine would refuse raises its
        EngineError here, before a worker is started or asked."""
        planned(request)
        return self.run(request)

    def poll_events(self) -> list[Event]:
        """Every event that has arrived, without waiting (for event loops that poll).

        An `Exit` among them means the worker died; `crash_error(event)` describes it.
        """
        events = [e for kept in self._unclaimed.values() for e in kept]
        self._unclaimed.clear()
        while self._worker is not None:
            try:
                events.append(self._worker.events.get_nowait())
            except queue.Empty:
                break
        return events

    def __enter__(self) -> EngineClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
