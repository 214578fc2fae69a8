"""The worker as a process seen from outside: how to start it, what its exit code
means, how to read an event from a line of its event pipe, and `WorkerProcess`, one
started worker with its reader threads, the tail of its stderr and its watchdog.

Requests and their ids are the engine client's business (engine_client.py); this
module only writes lines to the worker and queues the events it sends, ending with an
`Exit` when its stdout ends.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO

from app.core.infra.errors import EngineCrashed, EngineError
from app.core.infra.processes import no_window_flags
from app.engine.client.watchdog import Watchdog
from app.engine.protocol import (
    EVENT_START,
    PROTOCOL_VERSION,
    Cancel,
    Event,
    Exit,
    Failed,
    FailureCode,
    ProtocolError,
    Ready,
    Shutdown,
    encode_request,
    event_from_json,
)

log = logging.getLogger("draftdeck.engine.client")

STDERR_LINES = 40
WATCH_SECONDS = 0.5  # how often a waiting call asks the watchdog


def worker_command() -> list[str]:
    """How to start a worker: `python -m app.engine.worker`, or the frozen app with a flag."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--engine-worker"]
    return [sys.executable, "-m", "app.engine.worker"]


# Windows ends a process that crashes natively with its exception code as exit code.
WINDOWS_CRASHES = {
    0xC0000005: "an access violation",
    0xC000001D: "an illegal instruction",
    0xC0000094: "an integer division by zero",
    0xC00000FD: "a stack overflow",
    0xC0000374: "a heap corruption",
    0xC0000409: "a stack buffer overrun",
}


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    if code >= 0xC0000000:  # an NTSTATUS error: a native crash on Windows
        what = WINDOWS_CRASHES.get(code, "a native exception")
        return f"crashed with {what} (0x{code:08X})"
    return f"exited with code {code}"


_decoder = json.JSONDecoder()


def parse_event_line(raw: bytes) -> Event | None:
    """The event on one line of the event pipe, or None if it holds none.

    Only events are meant to reach this pipe, but on Windows a native library with its
    own C runtime may still print to the original stdout: its text, often without a
    newline, then comes before an event on the same line. The event is read from the
    first EVENT_START that parses; whatever else the line holds goes to the engine log.
    An object that breaks the protocol becomes a `Failed` for its request, so that
    nothing waits for it forever.
    """
    text = raw.decode("utf-8", "replace")
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return _event(whole)  # the usual case: the line is one event
    start = text.find(EVENT_START)
    while start >= 0:
        try:
            data, end = _decoder.raw_decode(text, start)
        except ValueError:
            start = text.find(EVENT_START, start + 1)
            continue
        stray = (text[:start] + " " + text[end:]).strip()
        log.warning("engine printed on the event pipe: %r", stray[:200])
        return _event(data)
    stray = text.strip()
    if stray:
        log.warning("engine wrote a line that holds no event: %r", stray[:200])
    return None


def _event(data: dict[str, object]) -> Event:
    try:
        return event_from_json(data)
    except ProtocolError as exc:
        log.warning("engine sent a malformed event: %s", exc)
        message = f"The engine sent a malformed event: {exc}"
        return Failed(FailureCode.BAD_EVENT, message, id=exc.request_id)


class EngineUnresponsive(EngineCrashed):
    """The worker stopped answering and was killed."""

    code = FailureCode.UNRESPONSIVE


class WorkerProcess:
    """One started worker. Its events arrive on `events` (the queue is this worker's
    own: a late reader never writes into a newer worker's), ending with Exit;
    `on_event` is called on the reader thread after each."""

    def __init__(
        self, command: list[str], stall_seconds: float, on_event: Callable[[], None]
    ) -> None:
        self.events: queue.Queue[Event] = queue.Queue()
        self._on_event = on_event
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stuck: str | None = None  # why the watchdog killed the worker
        self._write_lock = threading.Lock()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            creationflags=no_window_flags(),
        )
        self.pid = self._proc.pid
        self._watchdog = Watchdog(self.pid, stall_seconds)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [
            threading.Thread(
                target=self._read_events,
                args=(self._proc.stdout,),
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

    @property
    def exit_code(self) -> int | None:
        """The exit code once it has ended (None while it runs)."""
        return self._proc.poll()

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def wait_ready(self, seconds: float) -> None:
        """Return once the worker says Ready in this protocol; otherwise kill and
        release it (later requests would hang on a half-started worker) and raise."""
        try:
            ready: Event | None = self.next_event(timeout=seconds)
        except EngineError:
            ready = None
        if isinstance(ready, Ready) and ready.protocol == PROTOCOL_VERSION:
            return
        hung = self.running
        self._proc.kill()
        error: EngineError = self.crash_error(Exit(self._proc.wait()))
        if ready is None and hung:
            error = EngineError(
                f"The engine worker did not get ready within {seconds:g} s and was stopped.",
                FailureCode.TIMEOUT,
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
        self.release()
        raise error

    def _read_events(self, stream: IO[bytes]) -> None:
        for raw in stream:
            event = parse_event_line(raw)
            if event is not None:
                self.events.put(event)
                self._heard()
        self.events.put(Exit(self._proc.wait()))
        self._heard()

    def _heard(self) -> None:
        self._watchdog.progress()
        self._on_event()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._stderr.append(line)
                log.debug("engine: %s", line)

    def write(self, line: str) -> None:
        """One line to the worker's stdin; OSError when its pipe is gone."""
        stdin = self._proc.stdin
        assert stdin is not None
        with self._write_lock:
            stdin.write((line + "\n").encode("utf-8"))
            stdin.flush()

    def request_sent(self) -> None:
        """The watchdog's stall count starts with each request."""
        self._watchdog.progress()

    def next_event(self, timeout: float | None = None) -> Event:
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise EngineError("the engine did not answer in time", FailureCode.TIMEOUT) from None

    def watched_event(self, deadline: float | None) -> Event:
        """The next event; a stuck worker is killed meanwhile (its Exit comes next)."""
        while True:
            left = WATCH_SECONDS if deadline is None else deadline - time.monotonic()
            try:
                return self.events.get(timeout=max(0.0, min(WATCH_SECONDS, left)))
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise EngineError(
                        "the engine did not answer in time", FailureCode.TIMEOUT
                    ) from None
                self.kill_if_stuck()

    def drain_to_exit(self) -> Exit:
        while True:
            event = self.next_event(timeout=5)
            if isinstance(event, Exit):
                return event

    def kill_if_stuck(self) -> bool:
        """Kill the worker if the watchdog finds it stuck; its Exit then describes
        itself as EngineUnresponsive."""
        if not self.running:
            return False
        reason = self._watchdog.stuck()
        if reason is None:
            return False
        log.warning("engine worker %s: killing it", reason)
        self._stuck = reason
        self.kill()
        return True

    def kill(self, sig: int | None = None) -> None:
        """Popen.kill() (SIGKILL on POSIX, TerminateProcess on Windows), or send `sig`
        (tests send SIGSEGV to stand for a native crash). No POSIX-only name is
        evaluated here: Windows has no SIGKILL."""
        if self.running:
            if sig is None:
                self._proc.kill()
            else:
                os.kill(self.pid, sig)

    def crash_error(self, event: Exit) -> EngineCrashed:
        """What the worker's end means, with the last lines it wrote to stderr."""
        self._threads[1].join(timeout=1.0)  # a moment to collect the last words
        tail = list(self._stderr)
        if self._stuck is not None:
            message = f"The engine worker stopped responding: it {self._stuck}, so it was ended."
            return EngineUnresponsive(message, event.code, tail)
        message = f"The engine worker {describe_exit(event.code)}."
        if tail:
            message += f" Last output: {tail[-1]}"
        return EngineCrashed(message, event.code, tail)

    def close(self, timeout: float) -> None:
        """Ask the worker to stop what runs and leave; kill it after `timeout`."""
        if self.running:
            try:
                self.write(encode_request(Cancel()))  # a running generation ends first
                self.write(encode_request(Shutdown()))
                self._proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self.release()

    def release(self) -> None:
        """Close the pipes of a worker that has exited, and join its reader threads."""
        proc = self._proc
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        proc.wait()
        for thread in self._threads:
            thread.join(timeout=2.0)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
