"""The client reads events through whatever else reaches the event pipe (issue 15).

On Windows a native library with its own C runtime may print to the worker's original
stdout despite the redirect, often without a newline, so its text can come before an
event on the same line. The stand-in worker below is a real process that does exactly
that; the client under test is the real EngineClient.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.infra.errors import EngineError
from app.core.measure.metrics import DecodeStats
from app.core.measure.words import StopReason
from app.engine.client.engine_client import EngineClient
from app.engine.client.worker_process import parse_event_line
from app.engine.protocol import (
    PROTOCOL_VERSION,
    Done,
    Failed,
    Generate,
    Ping,
    Pong,
    Ready,
    Reset,
    Rounds,
    encode_event,
)

# A worker that prints like a leaky native library around every event it sends. It
# answers Reset with an error; the events are made here and given their ids there.
STAND_IN = textwrap.dedent(
    """
    import json, sys

    out = sys.stdout.buffer
    READY, PONG, ROUNDS_1, ROUNDS_2, DONE, FAILED = (json.loads(e) for e in {events!r})

    def send(prefix, event, rid=None, suffix=b""):
        if rid is not None:
            event = dict(event, id=rid)
        out.write(prefix + json.dumps(event).encode() + suffix + b"\\n")
        out.flush()

    out.write(b"The device supports: i8sdot:0, fp16:0\\n")  # a whole line, no event
    send(b"Warning: module need new clone, cloning now.", READY)
    for line in sys.stdin:
        request = json.loads(line)
        op, rid = request.get("op"), request.get("id")
        if op == "shutdown":
            break
        if op == "ping":
            out.write(b"12345\\n")  # JSON, but not an event
            out.write(b"\\xff\\xfe not UTF-8 ")  # a partial line: the event follows on it
            send(b"", PONG, rid)
        elif op == "generate":
            # A broken start of an event, then a real one, on the same line.
            send(b'load {{"event": "rou', ROUNDS_1, rid)
            send(b"", ROUNDS_2, rid, b" trailing words")
            send(b"[Error]: prompt cache ", DONE, rid)
        elif op == "reset":
            send(b"x", FAILED, rid)
    """
).format(
    events=[
        encode_event(event)
        for event in (
            Ready(pid=1, protocol=PROTOCOL_VERSION),
            Pong(),
            Rounds((1,), (False,), "a", ("a",), 0.1, ()),
            Rounds((2,), (False,), "b", ("b",), 0.2, ()),
            Done((1, 2), "ab", StopReason.MAX_TOKENS, DecodeStats("plain", 0)),
            Failed("bad_request", "no"),
        )
    ]
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
    assert isinstance(leaky_client.run(Ping(), timeout=30), Pong)
    rounds: list[Rounds] = []
    done = leaky_client.run(Generate(prompt="x"), on_rounds=rounds.append, timeout=30)
    assert [r.tokens for r in rounds] == [(1,), (2,)]
    assert done.tokens == (1, 2)
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
        leaky_client.run(Reset(), timeout=30)
    assert caught.value.code == "bad_request"
    assert isinstance(leaky_client.run(Ping(), timeout=30), Pong)


def test_parse_event_line() -> None:
    assert parse_event_line(b'{"event":"pong","id":3}\n') == Pong(id=3)
    # A clean line may have its keys in any order.
    assert parse_event_line(b'{"id": 3, "event": "pong"}\n') == Pong(id=3)
    assert parse_event_line(b'noise{"event": "pong", "id": 3}\n') == Pong(id=3)
    assert parse_event_line(b"noise only\n") is None
    assert parse_event_line(b"\n") is None
    assert parse_event_line(b"[1, 2]\n") is None
    assert parse_event_line(b'{"event": "cut off\n') is None
    # An event that breaks the protocol fails its request instead of being lost.
    broken = parse_event_line(json.dumps({"event": "done", "id": 4, "text": 1}).encode())
    assert isinstance(broken, Failed) and broken.id == 4 and broken.code == "bad_event"
    assert "missing field" in broken.message
