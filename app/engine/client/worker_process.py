"""The worker as a process seen from outside: how to start it, what its exit code
means, and how to read an event from a line of its event pipe."""

from __future__ import annotations

import json
import logging
import signal
import sys

from app.engine.protocol import EVENT_START, Event, Failed, ProtocolError, event_from_json

log = logging.getLogger("draftdeck.engine.client")


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
        return Failed("bad_event", f"The engine sent a malformed event: {exc}", id=exc.request_id)
