"""The command line's own error paths: a clear message and an exit code, never a
traceback on the terminal (the traceback of an unforeseen OS error goes to the log)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.arg_types import draft_length, whole_number
from app.core.infra.errors import EngineError
from app.engine.worker.session import Session
from tests.helpers.cli import APP, run_cli
from tests.helpers.read_only import read_only_folder

Fixture = Callable[[str], Path]


def _bench(fixture_bundle: Fixture, *extra: str) -> subprocess.CompletedProcess[str]:
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical")
    return run_cli("bench", "--target", str(target), "--draft", str(draft), *extra, timeout=120)


def test_bench_prompt_file_missing(
    fixture_bundle: Fixture, tmp_path: Path, draftdeck_home: Path
) -> None:
    missing = tmp_path / "prompt.txt"
    proc = _bench(fixture_bundle, "--prompt-file", str(missing))
    assert proc.returncode == 1, proc.stderr
    assert f"draftdeck: {missing}: file not found" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="/dev/fd is POSIX")
def test_bench_prompt_file_from_a_pipe_or_a_device(
    fixture_bundle: Fixture, draftdeck_home: Path
) -> None:
    """`--prompt-file <(cmd)` is a pipe the user asked for: read. /dev/zero: refused at
    the size limit instead of read forever."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"A prompt that came through a pipe.")
    os.close(write_end)
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical")
    command = ["bench", "--target", str(target), "--draft", str(draft), "--runs", "1"]
    try:
        proc = subprocess.run(
            [*APP, *command, "--tokens", "4", "--prompt-file", f"/dev/fd/{read_end}"],
            capture_output=True, text=True, timeout=120, pass_fds=(read_end,),
        )  # fmt: skip
    finally:
        os.close(read_end)
    assert proc.returncode == 0, proc.stderr
    proc = _bench(fixture_bundle, "--prompt-file", "/dev/zero")
    assert proc.returncode == 1, proc.stderr
    assert "draftdeck: /dev/zero: file is too large" in proc.stderr


def test_bench_prompt_file_not_utf8(
    fixture_bundle: Fixture, tmp_path: Path, draftdeck_home: Path
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"abc\xff")
    proc = _bench(fixture_bundle, "--prompt-file", str(prompt))
    assert proc.returncode == 1, proc.stderr
    assert f"draftdeck: {prompt}: not UTF-8 text (byte 3)" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("-d", "0", "0 is out of range (1 to 16)"),
        ("-d", "17", "17 is out of range (1 to 16)"),
        ("-d", "two", "'two' is not a whole number"),
        ("--tokens", "0", "0 is out of range (at least 1)"),
        ("--runs", "-1", "-1 is out of range (at least 1)"),
    ],
)
def test_bench_numbers_are_checked_by_the_parser(
    fixture_bundle: Fixture, draftdeck_home: Path, option: str, value: str, problem: str
) -> None:
    proc = _bench(fixture_bundle, f"{option}={value}")
    assert proc.returncode == 2, proc.stderr
    assert f"argument {option}: {problem}" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("option", "value"), [("-d", "0"), ("-d", "17"), ("--max-tokens", "0")])
def test_generate_numbers_are_checked_by_the_parser(
    fixture_bundle: Fixture, draftdeck_home: Path, option: str, value: str
) -> None:
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical")
    proc = run_cli(
        "generate", "--target", str(target), "--draft", str(draft), "--prompt", "hi",
        f"{option}={value}", timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"argument {option}: {value} is out of range" in proc.stderr


def test_engine_refuses_a_draft_length_of_zero(session: Session, fixture_bundle: Fixture) -> None:
    """0 used to mean "the recipe's d" (3) to the engine: a caller's 0 is refused."""
    with pytest.raises(EngineError, match="draft length 0 is out of range") as caught:
        session.load(
            str(fixture_bundle("qwen3-target")),
            str(fixture_bundle("qwen3-draft-identical")),
            draft_length=0,
        )
    assert caught.value.code == "bad_request"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_unforeseen_os_error_is_one_line_and_logged(
    fixture_bundle: Fixture, draftdeck_home: Path
) -> None:
    """A full disk under the output (ENOSPC): one line, exit 1, the traceback in the log."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*APP, "info", str(fixture_bundle("qwen3-target")), "--json"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "draftdeck: info failed: No space left on device\n"
    log = (draftdeck_home / "log" / "draftdeck.log").read_text(encoding="utf-8")
    assert "info failed: No space left on device" in log
    assert "Traceback" in log and "OSError: [Errno 28]" in log


@pytest.mark.skipif(os.name != "posix", reason="SIGPIPE and exit 141 are POSIX")
def test_a_reader_that_went_away_is_not_an_error(fixture_bundle: Fixture) -> None:
    """`draftdeck info … | head -0`: the pipe's read end is closed before the command
    writes anything, so every write fails with EPIPE; no message, no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*APP, "info", str(fixture_bundle("qwen3-target")), "--json"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    assert proc.stderr == ""


def _home_commands(fixture_bundle: Fixture) -> list[list[str]]:
    target, draft = str(fixture_bundle("qwen3-target")), str(fixture_bundle("qwen3-draft-noisy"))
    return [["info", target], ["check", target, draft], ["catalog"]]


def _run_with_home(home: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home), DRAFTDECK_HOME=str(home))
    return run_cli(*args, env=env, timeout=120)


def test_home_that_is_a_file(fixture_bundle: Fixture, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    for args in _home_commands(fixture_bundle):
        proc = _run_with_home(home, args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr, args
        # Whatever is said names the file at fault, one `draftdeck:` line each.
        for line in proc.stderr.splitlines():
            assert line.startswith("draftdeck: ") and str(home) in line, (args, line)


def test_read_only_home(fixture_bundle: Fixture, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with read_only_folder(home):
        for args in _home_commands(fixture_bundle):
            proc = _run_with_home(home, args)
            assert proc.returncode == 0, (args, proc.stderr)
            assert "Traceback" not in proc.stderr, args


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is POSIX")
def test_ctrl_c_is_exit_130_with_a_short_message(
    fixture_bundle: Fixture, draftdeck_home: Path
) -> None:
    """Interrupted while generating (a million tokens: it would not end by itself)."""
    target = fixture_bundle("qwen3-target")
    command = ["generate", "--target", str(target), "--prompt", "hi", "--raw", "--greedy"]
    proc = subprocess.Popen(
        [*APP, *command, "--max-tokens", "1000000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.read(1), "nothing generated"  # the engine is running
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert stderr == "draftdeck: interrupted\n"


def test_whole_number_argument_type() -> None:

    assert whole_number(1)("7") == 7 and draft_length("16") == 16
    for bad, parse in (("0", whole_number(1)), ("17", draft_length), ("1.5", draft_length)):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(bad)
