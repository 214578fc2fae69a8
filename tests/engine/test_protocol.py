"""The engine protocol: every message survives its JSON line, malformed lines are
clear errors (through the real worker too), and a worker of another version is
refused at start-up."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest

from app.core.infra.errors import EngineError
from app.core.measure.metrics import DecodeStats
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import FailureCode, Mode, StopReason, VerifyMethod
from app.engine import protocol
from app.engine.client.engine_client import EngineClient
from app.engine.client.worker_process import parse_event_line, worker_command
from app.engine.protocol import (
    PROTOCOL_VERSION,
    AgreementMeasured,
    Cancel,
    ChatTurn,
    Decode,
    Decoded,
    Done,
    Encode,
    Encoded,
    Event,
    Exit,
    Failed,
    Generate,
    Load,
    Loaded,
    MeasureAgreement,
    Ping,
    Pong,
    ProtocolError,
    Ready,
    Request,
    Reset,
    ResetDone,
    Round,
    Rounds,
    Shutdown,
    decode_event,
    decode_request,
    encode_event,
    encode_request,
    reply_type,
)
from app.engine.worker.server import Worker
from app.engine.worker.session import Session
from tests.helpers.engine_events import loaded_event

REQUESTS = [
    Load("t", "d", {"memory": "low"}, {"thread_num": 1}, 3),
    Load("t"),
    Generate(prompt="hi", mode=Mode.PLAIN, max_tokens=5, ignore_stop=True),
    Generate(messages=(ChatTurn("user", "a"), ChatTurn("assistant", "b")), chat=False),
    Generate(prompt_ids=(1, 2, 3)),
    MeasureAgreement(rows=16),
    Encode("text"),
    Decode((5, 6)),
    Reset(),
    Ping(),
    Cancel(7),
    Cancel(),
    Shutdown(),
]
STATS = DecodeStats("speculative", 2, prompt_tokens=4, rounds=1, drafted=2, accepted=1, tokens=3)
EVENTS: list[Event] = [
    Ready(pid=12, protocol=PROTOCOL_VERSION),
    loaded_event(draft={"name": "d"}, memory={"level": "fits"}, id=1),
    Rounds((1, 2), (True, False), "ab", ("a", "b"), 0.5, (Round(2, 1, 2, 0.1, 0.2),), id=2),
    Done((1, 2, 3), "abc", StopReason.MAX_TOKENS, STATS, id=2),
    AgreementMeasured(VerifyAgreement(0.5, 32, 64, 3, VerifyMethod.BATCHED), id=3),
    Encoded((1, 2), id=4),
    Decoded(("a", "b"), "ab", id=5),
    ResetDone(id=6),
    Pong(id=7),
    Failed("blocked_pair", "no", ({"code": "vocab"},), None, id=8),
    Failed("internal", "boom", details="Traceback", id=None),
    Exit(code=-11),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_every_request_survives_its_line(request_: Any) -> None:
    assert decode_request(encode_request(request_, 41)) == (41, request_)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_event_survives_its_line(event: Event) -> None:
    line = encode_event(event)
    assert decode_event(line) == event
    assert parse_event_line(line.encode()) == event


@pytest.mark.parametrize(
    ("line", "says", "request_id"),
    [
        ("{not json", "not JSON", None),
        ("[1, 2]", "must be a JSON object", None),
        ('{"op": "dance", "id": 3}', "unknown request 'dance'", 3),
        ('{"id": 3}', "unknown request None", 3),
        ('{"op": "load", "id": 4}', "missing field 'target'", 4),
        ('{"op": "load", "id": 4, "target": 5}', "field 'target' must be", 4),
        ('{"op": "generate", "id": 5, "max_tokens": true}', "field 'max_tokens' must be", 5),
        ('{"op": "generate", "id": 5, "prompt_ids": [1, "a"]}', "prompt_ids", 5),
        ('{"op": "ping", "id": 6, "extra": 1}', "unknown field 'extra'", 6),
        ('{"op": "ping", "id": "six"}', "must be a whole number", None),
    ],
)
def test_malformed_requests_are_clear_errors(line: str, says: str, request_id: int | None) -> None:
    with pytest.raises(ProtocolError, match=says) as caught:
        decode_request(line)
    assert caught.value.request_id == request_id


def test_malformed_events_are_clear_errors() -> None:
    with pytest.raises(ProtocolError, match="unknown event 'nope'"):
        decode_event('{"event": "nope"}')
    done = '{"event": "done", "id": 1, "tokens": [], "text": "", "stopped_by": "%s", "stats": %s}'
    with pytest.raises(ProtocolError, match=r"stats: missing field 'mode'"):
        decode_event(done % ("cancelled", "{}"))
    stats = json.dumps(DecodeStats("plain", 0).to_json())
    with pytest.raises(ProtocolError, match=r"field 'stopped_by' must be StopReason, not 'x'"):
        decode_event(done % ("x", stats))
    read = decode_event(done % ("cancelled", stats))
    assert isinstance(read, Done) and read.stopped_by is StopReason.CANCELLED
    with pytest.raises(ProtocolError, match=r"rounds\[0\]: field 'accepted' must be int"):
        decode_event(
            encode_event(Rounds((), (), "", (), 0.0, (Round(1, 0, 1, 0.0, 0.0),))).replace(
                '"accepted":0', '"accepted":0.5'
            )
        )


def test_the_real_worker_answers_bad_lines_with_error_events() -> None:
    lines = [
        "{not json",
        "[1]",
        '{"op": "dance", "id": 3}',
        '{"op": "load", "id": 4}',
        '{"op": "decode", "id": 5, "tokens": ["x"]}',
        encode_request(Decode((1,)), 6),  # well formed, but nothing is loaded
        encode_request(Ping(), 7),
        encode_request(Shutdown()),
    ]
    proc = subprocess.run(
        worker_command(),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    events = [decode_event(line) for line in proc.stdout.splitlines()]
    # Bad lines may be answered before Ready: the worker reads while MNN imports.
    assert [e.protocol for e in events if isinstance(e, Ready)] == [PROTOCOL_VERSION]
    failed = [e for e in events if isinstance(e, Failed)]
    assert [(e.id, e.code) for e in failed] == [
        (None, "bad_request"),
        (None, "bad_request"),
        (3, "bad_request"),
        (4, "bad_request"),
        (5, "bad_request"),
        (6, "not_loaded"),
    ]
    assert "missing field 'target'" in failed[3].message
    assert events[-1] == Pong(id=7)  # the worker lived through all of it


class _BrokenSession(Session):
    def reset(self) -> None:
        raise KeyError("a bug")


def test_an_internal_error_in_a_handler_becomes_an_error_event() -> None:
    out = io.StringIO()
    worker = Worker(out)
    worker._requests.put((9, Reset()))
    worker._requests.put((10, Ping()))
    worker._requests.put(None)
    assert worker.handle_requests(_BrokenSession()) == 0
    failed, pong = (decode_event(line) for line in out.getvalue().splitlines())
    assert isinstance(failed, Failed) and failed.id == 9 and failed.code == "internal"
    assert "KeyError" in failed.message and failed.details and "Traceback" in failed.details
    assert pong == Pong(id=10)  # the worker goes on


def test_a_worker_of_another_version_is_refused() -> None:
    ready = encode_event(Ready(pid=1, protocol=PROTOCOL_VERSION + 1))
    script = f"import sys; print({ready!r}, flush=True); sys.stdin.read()"
    client = EngineClient([sys.executable, "-c", script])
    with pytest.raises(EngineError) as caught:
        client.start()
    assert caught.value.code == "protocol_mismatch"
    assert f"protocol version {PROTOCOL_VERSION + 1}" in caught.value.message
    assert not client.running
    client.close()


def test_ready_without_a_version_is_refused() -> None:
    script = 'import sys; print(\'{"event": "ready", "pid": 1}\', flush=True); sys.stdin.read()'
    client = EngineClient([sys.executable, "-c", script])
    with pytest.raises(EngineError) as caught:
        client.start()
    assert caught.value.code == "bad_event" and "protocol" in caught.value.message
    client.close()


def test_wire_form_is_one_json_object_a_line() -> None:
    line = encode_request(Generate(prompt="a\nb"), 1)
    assert "\n" not in line and json.loads(line)["id"] == 1


def test_words_are_their_text_in_strings_json_and_keys() -> None:
    assert f"{Mode.PLAIN}" == str(Mode.PLAIN) == "plain"
    assert json.dumps({StopReason.CANCELLED: FailureCode.BLOCKED_PAIR}) == (
        '{"cancelled": "blocked_pair"}'
    )
    assert {"speculative": 1}[Mode.SPECULATIVE] == 1  # old keys find a word
    line = encode_request(Generate(prompt="hi", mode=Mode.SPECULATIVE))
    assert '"mode":"speculative"' in line
    line = encode_event(loaded_event(verify=VerifyMethod.STEPWISE))
    assert '"verify":"stepwise"' in line
    loaded = decode_event(line)
    assert isinstance(loaded, Loaded) and loaded.verify is VerifyMethod.STEPWISE


def test_each_request_names_the_event_that_ends_it() -> None:
    replies = {
        kind: reply_type(cls.__new__(cls)).__name__
        for kind, cls in protocol.REQUESTS.items()
        if issubclass(cls, Request)
    }
    assert replies == {
        "load": "Loaded",
        "generate": "Done",
        "agreement": "AgreementMeasured",
        "encode": "Encoded",
        "decode": "Decoded",
        "reset": "ResetDone",
        "ping": "Pong",
        "forced_logits": "LogitsWritten",
    }
