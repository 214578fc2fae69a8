"""The client reads events through whatever else reaches the event pipe (issue 15).

On Windows a native library with its own C runtime may print to the worker's original
stdout despite the redirect, often without a newline, so its text can come before an
event on the same line. The stand-in worker below is a real process that does exactly
that; the client under test is the real EngineClient.
"""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.infra.errors import EngineError
from app.engine.client.engine_client import EngineClient, parse_event_line

# A worker that prints like a leaky native library around every event it sends.
STAND_IN = textwrap.dedent(
    """
    import json, sys

    out = sys.stdout.buffer

    def send(prefix, event, suffix=b""):
        out.write(prefix + json.dumps(event).encode() + suffix + b"\\n")
        out.flush()

    out.write(b"The device supports: i8sdot:0, fp16:0\\n")  # a whole line, no event
    send(b"Warning: module need new clone, cloning now.", {"event": "ready", "pid": 1})
    for line in sys.stdin:
        request = json.loads(line)
        op, rid = request.get("op"), request.get("id")
        if op == "shutdown":
            break
        if op == "ping":
            out.write(b"12345\\n")  # JSON, but not an event
            out.write(b"\\xff\\xfe not UTF-8 ")  # a partial line: the event follows on it
            send(b"", {"event": "pong", "id": rid})
        elif op == "generate":
            # A broken start of an event, then a real one, on the same line.
            send(b'load {"event": "rou', {"event": "rounds", "id": rid, "tokens": [1]})
            send(b"", {"event": "rounds", "id": rid, "tokens": [2]}, b" trailing words")
            send(b"[Error]: prompt cache ", {"event": "done", "id": rid, "tokens": [1, 2]})
        elif op == "fail":
            send(b"x", {"event": "error", "id": rid, "code": "bad_request", "message": "no"})
    """
)


@pytest.fixture
def leaky_client(tmp_path: Path) -> Iterator[EngineClient]:
    script = tmp_path / "leaky_worker.py"
    script.write_text(STAND_IN, encoding="utf-8")
    with EngineClient([sys.executable, str(script)]) as client:
        yield client


def _pipe_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "draftdeck.engine.client"]


def test_events_survive_prints_on_their_line(
    leaky_client: EngineClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="draftdeck.engine.client")
    assert leaky_client.run("ping", timeout=30)["event"] == "pong"
    rounds: list[dict[str, Any]] = []
    done = leaky_client.run("generate", on_event=rounds.append, timeout=30)
    assert [r["tokens"] for r in rounds] == [[1], [2]]
    assert done["tokens"] == [1, 2]
    assert leaky_client.running  # nothing here was fatal
    logged = "\n".join(_pipe_warnings(caplog))
    # Every stray print reached the engine log, none was taken for an event.
    for stray in (
        "The device supports",
        "module need new clone",
        "12345",
        "not UTF-8",
        "load {",
        "trailing words",
        "prompt cache",
    ):
        assert stray in logged, stray


def test_an_error_event_after_a_print_is_still_an_error(leaky_client: EngineClient) -> None:
    with pytest.raises(EngineError) as caught:
        leaky_client.run("fail", timeout=30)
    assert caught.value.code == "bad_request"
    assert leaky_client.run("ping", timeout=30)["event"] == "pong"


def test_parse_event_line() -> None:
    assert parse_event_line(b'{"event":"pong","id":3}\n') == {"event": "pong", "id": 3}
    # A clean line keeps any key order, as before.
    assert parse_event_line(b'{"id": 3, "event": "pong"}\n') == {"id": 3, "event": "pong"}
    assert parse_event_line(b'noise{"event": "pong", "id": 3}\n') == {"event": "pong", "id": 3}
    assert parse_event_line(b"noise only\n") is None
    assert parse_event_line(b"\n") is None
    assert parse_event_line(b"[1, 2]\n") is None
    assert parse_event_line(b'{"event": "cut off\n') is None
