"""Start and talk to the engine worker process. No Qt: the GUI wraps it in signals.

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

import collections
import contextlib
import itertools
import logging
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

from app.core.infra.errors import EngineCrashed, EngineError
from app.core.infra.processes import no_window_flags
from app.engine.client.watchdog import DEFAULT_STALL_SECONDS, Watchdog
from app.engine.client.worker_process import describe_exit, parse_event_line, worker_command
from app.engine.protocol import (
    PROTOCOL_VERSION,
    Cancel,
    Event,
    Exit,
    Failed,
    OneWay,
    Ready,
    Request,
    Rounds,
    Shutdown,
    encode_request,
    reply_type,
)

log = logging.getLogger("draftdeck.engine.client")

ReplyT = TypeVar("ReplyT")
OnRounds = Callable[[Rounds], None]
STDERR_LINES = 40
READY_SECONDS = 60.0  # MNN's import takes a second or so; a cold disk far longer
WATCH_SECONDS = 0.5  # how often a waiting call asks the watchdog


class EngineUnresponsive(EngineCrashed):
    """The worker stopped answering and was killed."""

    code = "unresponsive"


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
        self._watchdog: Watchdog | None = None
        self._stuck: str | None = None  # why the watchdog killed the worker
        self._proc: subprocess.Popen[bytes] | None = None
        self._events: queue.Queue[Event] = queue.Queue()
        self._unclaimed: dict[int | None, list[Event]] = {}
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.crashed: EngineCrashed | None = None
        # Called on the reader thread after each event is queued (an event loop's cue
        # to call poll_events); None: nobody is told.
        self.on_event: Callable[[], None] | None = None

    # -- process ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def exit_code(self) -> int | None:
        """The worker's exit code once it has ended (None while it runs, or never ran)."""
        return self._proc.poll() if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        if self.running:
            return
        self._release()
        self._events = queue.Queue()
        self._unclaimed = {}
        self._stderr.clear()
        self.crashed = None
        self._stuck = None
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._proc = subprocess.Popen(
            self._command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            creationflags=no_window_flags(),
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._watchdog = Watchdog(self._proc.pid, self.stall_seconds)
        self._threads = [
            threading.Thread(
                target=self._read_events,
                args=(self._proc, self._proc.stdout, self._events, self._notify),
                name="engine-events",
                daemon=True,
            ),
            threading.Thread(
                target=self._read_stderr,
                args=(self._proc.stderr,),
                name="engine-stderr",
                daemon=True,
            ),
        ]
        for thread in self._threads:
            thread.start()
        try:
            ready: Event | None = self._next_event(timeout=self.ready_seconds)
        except EngineError:
            ready = None
        if isinstance(ready, Ready) and ready.protocol == PROTOCOL_VERSION:
            return
        # Never leave a half-started worker behind: later requests would hang on it.
        hung = self._proc.poll() is None
        self._proc.kill()
        error: EngineError = self._crash_error(Exit(self._proc.wait()))
        if ready is None and hung:
            error = EngineError(
                f"The engine worker did not get ready within {self.ready_seconds:g} s "
                "and was stopped.",
                "timeout",
            )
        elif isinstance(ready, Ready):
            error = EngineError(
                f"The engine worker speaks protocol version {ready.protocol}, this app "
                f"version {PROTOCOL_VERSION}: the worker and the app come from different "
                "builds.",
                "protocol_mismatch",
            )
        elif isinstance(ready, Failed):
            error = EngineError(ready.message, ready.code)
        self._release()
        raise error

    @staticmethod
    def _read_events(
        proc: subprocess.Popen[bytes],
        stream: IO[bytes],
        events: queue.Queue[Event],
        notify: Callable[[], None],
    ) -> None:
        # The queue is this worker's own: a late reader never writes into a newer one.
        for raw in stream:
            event = parse_event_line(raw)
            if event is not None:
                events.put(event)
                notify()
        events.put(Exit(proc.wait()))
        notify()

    def _notify(self) -> None:
        watchdog = self._watchdog
        if watchdog is not None:
            watchdog.progress()
        listener = self.on_event
        if listener is not None:
            try:
                listener()
            except RuntimeError:  # a listener torn down mid-call must not stop the reader
                log.debug("event listener gone", exc_info=True)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._stderr.append(line)
                log.debug("engine: %s", line)

    def _crash_error(self, event: Exit) -> EngineCrashed:
        code = event.code
        # Give the stderr reader a moment to collect the last words.
        if len(self._threads) > 1:
            self._threads[1].join(timeout=1.0)
        tail = list(self._stderr)
        if self._stuck is not None:
            self.crashed = EngineUnresponsive(
                f"The engine worker stopped responding: it {self._stuck}, so it was ended.",
                code,
                tail,
            )
            return self.crashed
        message = f"The engine worker {describe_exit(code)}."
        if tail:
            message += f" Last output: {tail[-1]}"
        self.crashed = EngineCrashed(message, code, tail)
        return self.crashed

    def kill_if_stuck(self) -> bool:
        """Kill the worker if the watchdog finds it stuck (call while a request is
        pending); its Exit event then raises or reports EngineUnresponsive."""
        watchdog = self._watchdog
        if not self.running or watchdog is None:
            return False
        reason = watchdog.stuck()
        if reason is None:
            return False
        log.warning("engine worker %s: killing it", reason)
        self._stuck = reason
        self.kill()
        return True

    def _next_event(self, timeout: float | None = None) -> Event:
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            raise EngineError("the engine did not answer in time", "timeout") from None

    def _watched_event(self, deadline: float | None) -> Event:
        """The next event; a stuck worker is killed meanwhile (its Exit comes next)."""
        while True:
            left = WATCH_SECONDS if deadline is None else deadline - time.monotonic()
            try:
                return self._events.get(timeout=max(0.0, min(WATCH_SECONDS, left)))
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise EngineError("the engine did not answer in time", "timeout") from None
                self.kill_if_stuck()

    def _join_threads(self) -> None:
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._threads = []

    def close(self, timeout: float = 5.0) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                self._send(Cancel())  # a running generation ends first
                self._send(Shutdown())
                proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        self._release()

    def _release(self) -> None:
        """Close the pipes of a worker that has exited, and join its reader threads."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        proc.wait()
        self._join_threads()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()

    def kill(self, sig: int | None = None) -> None:
        """Kill the worker: Popen.kill() (SIGKILL on POSIX, TerminateProcess on Windows),
        or send `sig` (tests send SIGSEGV to stand for a native crash). No POSIX-only
        name is evaluated here: Windows has no SIGKILL."""
        if self._proc is not None and self._proc.poll() is None:
            if sig is None:
                self._proc.kill()
            else:
                os.kill(self._proc.pid, sig)

    # -- requests --------------------------------------------------------------------------

    def _send(self, request: Request[Any] | OneWay, request_id: int | None = None) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise EngineError("the engine is not running", "not_running")
        data = (encode_request(request, request_id) + "\n").encode("utf-8")
        with self._write_lock:
            proc.stdin.write(data)
            proc.stdin.flush()

    def send(self, request: Request[ReplyT]) -> int:
        """Send a request without waiting; returns its id."""
        if not self.running:
            self.start()
        request_id = next(self._ids)
        if self._watchdog is not None:
            self._watchdog.progress()  # the stall count starts with the request
        try:
            self._send(request, request_id)
        except OSError:
            raise self._crash_error(self._drain_to_exit()) from None
        return request_id

    def cancel(self, request_id: int | None = None) -> None:
        """Stop a generation (the one running, or request_id even before it starts).

        It ends with stopped_by "cancelled".
        """
        if self.running:
            with contextlib.suppress(OSError):
                self._send(Cancel(request_id))

    def wait(
        self,
        request_id: int,
        on_rounds: OnRounds | None = None,
        timeout: float | None = None,
    ) -> Event:
        """Wait for the final event of a request; raises EngineError or EngineCrashed
        (EngineUnresponsive when the worker got stuck and was killed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            kept = self._unclaimed.get(request_id)
            event = kept.pop(0) if kept else self._watched_event(deadline)
            if isinstance(event, Exit):
                raise self._crash_error(event)
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
                "bad_event",
            )
        return event

    def poll_events(self) -> list[Event]:
        """Every event that has arrived, without waiting (for event loops that poll).

        An `Exit` among them means the worker died; `crash_error(event)` describes it.
        """
        events = [e for kept in self._unclaimed.values() for e in kept]
        self._unclaimed.clear()
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                return events

    def crash_error(self, exit_event: Exit) -> EngineCrashed:
        return self._crash_error(exit_event)

    def _drain_to_exit(self) -> Exit:
        while True:
            event = self._next_event(timeout=5)
            if isinstance(event, Exit):
                return event

    def __enter__(self) -> EngineClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
