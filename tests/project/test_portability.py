"""DraftDeck on Windows, checked without Windows: every module of `app` imports, the
CLI and each of its commands answer --help, and the self-test passes (window, engine
worker, adb) in interpreters that lack the POSIX-only names of `signal`, `os` and
`select` and cannot import fcntl, termios, pwd, grp, resource (tests/helpers/
posix_free.py, installed as the `sitecustomize` of every Python started here, the
engine worker included). A default argument `sig=signal.SIGKILL` once crashed the
Windows app at launch; this class of bug cannot come back unnoticed.

`mypy --platform win32 app` (make lint) catches the same names statically.
"""

from __future__ import annotations

import argparse
import json
import os
import pkgutil
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import app
from app.cli.main import build_parser
from app.core.infra import processes
from app.core.infra.errors import EngineCrashed
from app.core.phone import adb
from app.engine.client.engine_client import EngineClient
from app.engine.client.worker_process import describe_exit
from app.engine.protocol import PROTOCOL_VERSION, Ready, encode_event
from tests.helpers.paths import HELPERS

HELPER = HELPERS / "posix_free.py"
posix_only = pytest.mark.skipif(os.name != "posix", reason="strips POSIX names from Python")


@pytest.fixture
def windows_like_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose Pythons start without the names Windows lacks."""
    site = tmp_path / "posix-free"
    site.mkdir()
    shutil.copy(HELPER, site / "sitecustomize.py")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path, "QT_QPA_PLATFORM": "offscreen"}


def _python(
    code: str, env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _modules() -> list[str]:
    # __main__ modules run the program when imported: the CLI test runs `python -m app`.
    found = pkgutil.walk_packages(app.__path__, "app.")
    return sorted(m.name for m in found if not m.name.endswith(".__main__"))


IMPORT_ALL = """
import importlib, json, os, signal, sys
stripped = not hasattr(signal, "SIGKILL") and not hasattr(os, "getuid")
try:
    import fcntl  # noqa: F401
    stripped = False
except ImportError:
    pass
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"stripped": stripped, "failed": failed}))
"""


@posix_only
def test_every_app_module_imports_without_posix_names(windows_like_env: dict[str, str]) -> None:
    modules = _modules()
    assert {
        "app.ui.shell.main_window",
        "app.engine.client.engine_client",
        "app.engine.worker.server",
    } <= set(modules)
    done = _python(IMPORT_ALL, windows_like_env, *modules)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["stripped"], "the POSIX names were not removed: the test tests nothing"
    assert result["failed"] == {}


def _command_paths(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _command_paths(sub, (*path, name))


HELP_ALL = """
import contextlib, io, json, runpy, sys
codes = {}
for line in sys.argv[1:]:
    sys.argv = ["draftdeck", *json.loads(line)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_module("app", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code
    codes[line] = [code, out.getvalue()]
print(json.dumps(codes))
"""


@posix_only
def test_cli_and_every_command_answer_help_without_posix_names(
    windows_like_env: dict[str, str],
) -> None:
    commands = [[*path, "--help"] for path in _command_paths(build_parser())]
    commands.append(["--version"])
    assert ["phone-packs", "--help"] in commands and ["recipe", "set", "--help"] in commands
    done = _python(HELP_ALL, windows_like_env, *(json.dumps(c) for c in commands))
    assert done.returncode == 0, done.stderr
    codes = json.loads(done.stdout.splitlines()[-1])
    for line, (code, out) in codes.items():
        assert code == 0, f"draftdeck {' '.join(json.loads(line))}: {code}\n{done.stderr}"
        assert out.startswith(("usage: draftdeck", "draftdeck ")), out


@posix_only
def test_self_test_passes_without_posix_names(windows_like_env: dict[str, str]) -> None:
    """The window, the engine worker (MNN) and adb, the way a Windows build runs them."""
    done = subprocess.run(
        [sys.executable, "-m", "app", "--self-test"],
        env=windows_like_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for step in ("bundles", "window", "engine", "adb"):
        assert f"ok   {step}:" in done.stdout, done.stdout


def test_kill_needs_no_posix_signal() -> None:
    line = encode_event(Ready(pid=0, protocol=PROTOCOL_VERSION))
    ready = f"import time; print({line!r}, flush=True); time.sleep(60)"
    client = EngineClient([sys.executable, "-c", ready])
    client.start()
    try:
        client.kill()  # Popen.kill(): SIGKILL on POSIX, TerminateProcess on Windows
        with pytest.raises(EngineCrashed) as caught:
            client.wait(-1, timeout=30)  # nothing but the exit can arrive
    finally:
        client.close()
    crashed = caught.value
    if os.name == "posix":
        assert crashed.exit_code == -9 and "killed by SIGKILL" in str(crashed)
    else:
        assert crashed.exit_code is not None and crashed.exit_code != 0


def test_windows_crash_codes_are_described() -> None:
    assert describe_exit(0xC0000005) == "crashed with an access violation (0xC0000005)"
    assert describe_exit(0xC06D007E) == "crashed with a native exception (0xC06D007E)"
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-11) == "killed by SIGSEGV"


def test_programs_start_without_a_console_window_on_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert processes.no_window_flags() == (0x08000000 if sys.platform == "win32" else 0)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(subprocess, "CREATE_NO_WINDOW", 0x08000000, raising=False)
    assert processes.no_window_flags() == 0x08000000

    started: list[dict[str, object]] = []
    answers = iter([False, True])  # no server yet; running after start-server
    monkeypatch.setattr(adb, "server_running", lambda port: next(answers))
    monkeypatch.setattr(adb, "adb_executable", lambda: "adb.exe")
    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: started.append(kw))
    adb.Adb(port=5999).ensure_server()
    assert started and started[0]["creationflags"] == 0x08000000
