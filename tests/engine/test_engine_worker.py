"""The engine worker process: protocol, cancel latency, crashes, errors."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import pytest

from app.core.infra.errors import EngineCrashed, EngineError
from app.engine.client.engine_client import EngineClient
from app.engine.client.worker_process import parse_event_line, worker_command
from app.engine.protocol import (
    PROTOCOL_VERSION,
    ChatTurn,
    Done,
    Encode,
    Generate,
    Load,
    Loaded,
    Ping,
    Pong,
    Ready,
    Request,
    Rounds,
    Shutdown,
    decode_event,
    encode_event,
    encode_request,
)
from tests.helpers.cli import run_cli

NORMAL = {"memory": "normal", "thread_num": 1}
Fixture = Callable[[str], Path]


def _load_pair(client: EngineClient, fixture_bundle: Fixture) -> Loaded:
    return client.run(
        Load(
            target=str(fixture_bundle("qwen3-target")),
            draft=str(fixture_bundle("qwen3-draft-noisy")),
            target_config=NORMAL,
            draft_config=NORMAL,
            draft_length=3,
        ),
        timeout=60,
    )


def test_mnn_prints_never_reach_the_protocol(fixture_bundle: Fixture) -> None:
    load = Load(
        target=str(fixture_bundle("qwen3-target")),
        draft=str(fixture_bundle("qwen3-draft-identical")),
        draft_length=2,
    )
    requests = [
        encode_request(load, 1),
        encode_request(Generate(prompt="hi", max_tokens=30), 2),
        encode_request(Shutdown()),
    ]
    proc = subprocess.run(
        worker_command(),
        input="\n".join(requests) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    events = [decode_event(line) for line in proc.stdout.splitlines()]  # every line is one
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "Ready" and "Loaded" in kinds and kinds[-1] == "Done"
    # MNN did print (to C stdout), and it went to stderr.
    assert "The device supports" in proc.stderr


def test_generate_streams_rounds_that_add_up(client: EngineClient, fixture_bundle: Fixture) -> None:
    loaded = _load_pair(client, fixture_bundle)
    assert loaded.lossless_expected is True
    batches: list[Rounds] = []
    done = client.run(
        Generate(prompt="Once upon a time", max_tokens=200, ignore_stop=True),
        on_rounds=batches.append,
    )
    streamed = tuple(t for b in batches for t in b.tokens)
    assert streamed == done.tokens
    assert "".join(b.text for b in batches) == done.text
    stats = done.stats
    assert sum(f for b in batches for f in b.from_draft) == stats.from_draft
    rounds = [r for b in batches for r in b.rounds]
    assert len(rounds) == stats.rounds
    assert sum(r.accepted for r in rounds) == stats.accepted
    assert stats.from_draft + stats.corrections == stats.tokens == 200


def test_cancel_stops_a_generation_that_would_not_end(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    # How quickly is a figure of benchmarks/cancel_latency.py; here: cancelling once the
    # first tokens came ends a practically endless generation, as "cancelled".
    _load_pair(client, fixture_bundle)
    limit = 1_000_000
    request = client.send(Generate(prompt="Go on forever.", max_tokens=limit, ignore_stop=True))
    cancelled: list[Rounds] = []

    def on_event(event: Rounds) -> None:
        if not cancelled:
            cancelled.append(event)
            client.cancel()

    done = client.wait(request, on_event, timeout=120)  # a guard against a hang only
    assert cancelled
    assert isinstance(done, Done) and done.stopped_by == "cancelled"
    assert done.stats.tokens < limit


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX signal stands for the crash")
def test_native_crash_becomes_engine_crashed_and_restart_works(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    _load_pair(client, fixture_bundle)
    request = client.send(Generate(prompt="Keep going.", max_tokens=1_000_000, ignore_stop=True))
    client.kill(signal.SIGSEGV)
    with pytest.raises(EngineCrashed) as caught:
        client.wait(request, timeout=30)
    assert caught.value.exit_code == -signal.SIGSEGV
    assert "SIGSEGV" in str(caught.value)
    assert caught.value.stderr_tail  # the last lines the worker wrote are kept
    # The next request starts a fresh worker with no pair (the bridge replays a load,
    # the client does not: one owner); loading again restarts the work.
    with pytest.raises(EngineError) as not_loaded:
        client.run(Generate(prompt="Hello again", max_tokens=10), timeout=60)
    assert not_loaded.value.code == "not_loaded"
    _load_pair(client, fixture_bundle)
    done = client.run(Generate(prompt="Hello again", max_tokens=10), timeout=60)
    assert len(done.tokens) <= 10 and done.stats.mode == "speculative"


def test_broken_bundle_is_an_error_event(
    client: EngineClient, bundle_copy: Callable[..., Path]
) -> None:
    pack = bundle_copy()
    (pack / "llm.mnn").unlink()
    with pytest.raises(EngineError) as caught:
        client.run(Load(target=str(pack)), timeout=60)
    assert caught.value.code == "missing_file"
    assert str(pack / "llm.mnn") in caught.value.message
    assert client.running
    assert isinstance(client.run(Ping()), Pong)


def test_blocked_pair_is_refused(client: EngineClient, fixture_bundle: Fixture) -> None:
    with pytest.raises(EngineError) as caught:
        client.run(
            Load(
                target=str(fixture_bundle("qwen3-target")),
                draft=str(fixture_bundle("qwen35-draft")),
            ),
            timeout=60,
        )
    assert caught.value.code == "blocked_pair"
    assert "vocabularies" in caught.value.message


def test_generate_before_load_is_an_error(client: EngineClient) -> None:
    with pytest.raises(EngineError, match="no model is loaded"):
        client.run(Generate(prompt="hi"), timeout=60)


def test_cli_bench_json(fixture_bundle: Fixture, tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps(NORMAL))
    proc = run_cli(
        "bench",
        "--target",
        str(fixture_bundle("qwen3-target")),
        "--draft",
        str(fixture_bundle("qwen3-draft-identical")),
        "--recipe",
        str(recipe),
        "--draft-recipe",
        str(recipe),
        "-d",
        "3",
        "--tokens",
        "60",
        "--runs",
        "2",
        "--min-run-seconds",
        "0",  # one generation per run: `tokens` is then the 60 asked for
        "--fixed",  # every round drafts 3: the counts below are exact
        "--json",
        timeout=300,
        check=True,
    )
    result = json.loads(proc.stdout)
    assert result["drafting"] == "fixed"
    for key in (
        "baseline_tok_s",
        "spec_tok_s",
        "uplift",
        "acceptance",
        "mean_accepted_length",
        "per_position_acceptance",
        "cost_ratio",
        "predicted_speedup",
        "lossless",
        "tokens",
    ):
        assert key in result
    assert result["acceptance"] == 1.0 and result["lossless"] is True
    # Greedy by default: nothing drawn, so no seed and no expected acceptance.
    assert (result["sampler"], result["seed"], result["expected_acceptance"]) == (
        "greedy",
        None,
        None,
    )
    assert result["tokens"] == 60
    # An identical draft: every position always accepted, 4 tokens a round (59 after the
    # prefill's first, in 15 rounds), and the i.i.d. speedup of the measured c.
    assert result["per_position_acceptance"] == [1.0, 1.0, 1.0]
    assert result["mean_accepted_length"] == pytest.approx(59 / 15)
    c = result["cost_ratio"]
    # A measured ratio: its size depends on the machine's load (benchmarks/ measure it).
    assert math.isfinite(c) and c > 0
    assert result["iid_speedup"] == pytest.approx(4 / (3 * c + 1))
    low, high = result["uplift_spread"]
    assert low <= result["uplift"] <= high


def test_cli_generate_json_and_blocked_exit(fixture_bundle: Fixture) -> None:
    proc = run_cli(
        "generate",
        "--target",
        str(fixture_bundle("qwen3-target")),
        "--draft",
        str(fixture_bundle("qwen3-draft-noisy")),
        "--prompt",
        "Hello",
        "--max-tokens",
        "20",
        "--json",
        timeout=300,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out["stats"]["tokens"] == len(out["tokens"]) <= 20
    # The recipe's sampler by default, and the seed that repeats the text.
    assert out["sampler"] == out["stats"]["sampler"] != "greedy"
    assert isinstance(out["seed"], int) and out["seed"] == out["stats"]["seed"]
    blocked = run_cli(
        "generate",
        "--target",
        str(fixture_bundle("qwen3-target")),
        "--draft",
        str(fixture_bundle("qwen35-draft")),
        "--prompt",
        "Hello",
        timeout=300,
    )
    assert blocked.returncode == 1
    assert "cannot work" in blocked.stderr


def test_cancel_that_arrives_before_the_generation_starts(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    _load_pair(client, fixture_bundle)
    request = client.send(Generate(prompt="Go on.", max_tokens=1_000_000, ignore_stop=True))
    client.cancel(request)  # at once: the worker may not have started it yet
    done = client.wait(request, timeout=30)
    assert isinstance(done, Done) and done.stopped_by == "cancelled"
    assert len(done.tokens) < 1000


def test_events_of_several_requests_in_flight(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    _load_pair(client, fixture_bundle)
    first = client.send(Generate(prompt="One", max_tokens=30))
    second = client.send(Ping())
    assert isinstance(client.wait(second, timeout=30), Pong)
    streamed: list[Rounds] = []
    done = client.wait(first, streamed.append, timeout=30)
    assert isinstance(done, Done)
    assert tuple(t for e in streamed for t in e.tokens) == done.tokens


def test_token_ids_outside_the_vocabulary_are_refused(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    _load_pair(client, fixture_bundle)
    # ["a"] is refused by the worker's protocol check, the others by the session.
    for bad in ((10**6,), (-1,), (), cast(tuple[int, ...], ("a",))):
        with pytest.raises(EngineError) as caught:
            client.run(Generate(prompt_ids=bad, max_tokens=5), timeout=30)
        assert caught.value.code == "bad_request"
    assert isinstance(client.run(Ping(), timeout=30), Pong)  # no native crash


def test_worker_that_never_gets_ready(tmp_path: Path) -> None:
    client = EngineClient(
        [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
    )
    with pytest.raises(EngineCrashed) as caught:
        client.start()
    assert "exited with code 3" in str(caught.value)
    assert "boom" in caught.value.stderr_tail
    assert not client.running
    client.close()


def test_worker_stops_when_its_client_goes_away(fixture_bundle: Fixture) -> None:
    proc = subprocess.Popen(
        worker_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    generating = threading.Event()

    def read_events(pipe: IO[str]) -> None:  # until the worker's end closes the pipe
        for line in pipe:
            event = parse_event_line(line.encode())
            if event is not None and event.id == 2:
                generating.set()

    reader = threading.Thread(target=read_events, args=(proc.stdout,), name="test-events")
    reader.start()
    proc.stdin.write(encode_request(Load(target=str(fixture_bundle("qwen3-target"))), 1) + "\n")
    generate = Generate(prompt="x", max_tokens=10**7, ignore_stop=True)
    proc.stdin.write(encode_request(generate, 2) + "\n")
    proc.stdin.flush()
    assert generating.wait(120)  # the first tokens came: it is generating, not loading
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0  # a guard against a hang, not a speed limit
    reader.join(15)
    proc.stdout.close()


def test_text_that_is_not_unicode_never_reaches_mnn(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    # A lone surrogate made MNN's tokenizer crash the worker with SIGSEGV (issue 18).
    _load_pair(client, fixture_bundle)
    bad = os.fsdecode(b"abc\xff")  # "abc\udcff", as argv gives undecodable bytes
    refused: list[Request[Any]] = [
        Generate(prompt=bad, max_tokens=5),
        Generate(messages=(ChatTurn("user", "\ud800"),), max_tokens=5),
        Encode(bad),
        Encode("abc\0 def"),  # MNN read this as "abc": the rest silently gone
    ]
    for request in refused:
        with pytest.raises(EngineError) as caught:
            client.run(request, timeout=30)
        assert caught.value.code == "bad_text"
    assert "NUL character (MNN would end the text there) at character 3" in str(caught.value)
    with pytest.raises(EngineError, match="0xFF, which is not UTF-8, at character 3"):
        client.run(Encode(bad), timeout=30)
    assert client.run(Encode("abc 😀"), timeout=30).tokens  # a real astral character is fine
    # The worker refuses such text even from a client that sends it anyway.
    assert client.pid is not None
    line = encode_request(Ping(), 99).replace('"op":"ping"', '"op":"encode","text":"\\udcff"')
    assert client._worker is not None
    client._worker.write(line)
    with pytest.raises(EngineError) as caught:
        client.wait(99, timeout=30)
    assert caught.value.code == "bad_text"
    assert isinstance(client.run(Ping(), timeout=30), Pong)  # no native crash


def test_cli_generate_with_a_prompt_that_is_not_utf8(fixture_bundle: Fixture) -> None:
    proc = run_cli(
        "generate",
        "--target",
        str(fixture_bundle("qwen3-target")),
        "--prompt",
        os.fsdecode(b"abc\xff"),  # passed on as the raw bytes
        "--max-tokens",
        "5",
        timeout=300,
    )
    assert proc.returncode == 1
    assert "0xFF, which is not UTF-8" in proc.stderr
    assert "Traceback" not in proc.stderr and "SIGSEGV" not in proc.stderr


def test_a_worker_that_hangs_before_ready_is_stopped() -> None:
    client = EngineClient([sys.executable, "-c", "import time; time.sleep(3600)"], ready_seconds=1)
    with pytest.raises(EngineError) as caught:
        client.start()
    assert caught.value.code == "timeout" and "did not get ready within 1 s" in str(caught.value)
    assert not client.running
    client.close()


def _stand_in(work: str) -> EngineClient:
    """A worker that gets ready, then runs `work` on the first request (and stays)."""
    ready = encode_event(Ready(1, PROTOCOL_VERSION))
    script = f"import os, sys, time\nprint({ready!r}, flush=True)\nsys.stdin.readline()\n{work}"
    return EngineClient([sys.executable, "-c", script], stall_seconds=3600)


def test_a_request_that_gets_no_answer_times_out() -> None:
    with _stand_in("time.sleep(3600)") as client:
        # The worker sleeps an hour: only the 1 s timeout can end this wait.
        with pytest.raises(EngineError) as caught:
            client.run(Ping(), timeout=1)
        assert caught.value.code == "timeout"
        assert client.running  # a slow answer is not a crash


def test_a_shutdown_that_hangs_ends_in_a_kill() -> None:
    client = _stand_in("time.sleep(3600)")
    client.start()
    client.send(Ping())  # now it sleeps and reads nothing, not even Shutdown
    pid = client.pid
    client.close(timeout=1)  # it sleeps an hour: only the kill can end it now
    assert not client.running and client.pid is None
    assert pid is not None and not _alive(pid)


def test_writing_to_a_worker_whose_pipe_is_gone_is_a_crash() -> None:
    # Ready, then it closes its stdin and exits: the client's write meets a dead pipe.
    with _stand_in("") as client:
        client._command[-1] = client._command[-1].replace(
            "sys.stdin.readline()", "os.close(0)\ntime.sleep(0.5)\nsys.exit(4)"
        )
        client.start()
        time.sleep(0.2)  # its stdin is closed; it still runs
        assert client.running
        with pytest.raises(EngineCrashed) as caught:
            client.send(Ping())
        assert "exited with code 4" in str(caught.value)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
