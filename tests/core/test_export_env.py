"""The export environment: built once (tests/helpers/export_env.py, by DraftDeck's own
builder), ready only with its stamp and today's pins, a CPU torch, and a build that is
cancelled or refused leaves nothing of its own behind and nothing of the user's lost."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking import export_env as export_env_module
from app.core.packmaking.export_env import (
    CONSTRAINTS,
    EXPORT_ENV_VAR,
    OWNER_MARK,
    STAMP,
    pinned_requirements,
    plan_export_env,
    ready_export_env,
)
from app.core.packmaking.export_env_build import (
    CANCELLED,
    CREATING,
    FAILED,
    ExportEnvJob,
    index_resolves,
    pip_command,
)
from tests.helpers.export_env import HF_FIXTURES, export_env, fake_export_env
from tests.helpers.paths import FIXTURES

pytestmark = pytest.mark.slow


def _wait_until(condition: Callable[[], bool], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def test_the_built_environment_has_its_pins_and_a_cpu_torch() -> None:
    env = export_env()
    assert ready_export_env(env.folder) == env  # stamped with today's pins
    assert (env.llmexport_dir() / "llmexport.py").is_file()
    assert plan_export_env(env.folder).ready
    got = subprocess.run(
        [
            str(env.python),
            "-c",
            "import torch, transformers; print(torch.__version__, "
            "torch.cuda.is_available(), transformers.__version__)",
        ],
        env=env.environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    torch_version, cuda, transformers_version = got
    if sys.platform != "darwin":
        assert torch_version == "2.13.0+cpu"
    assert cuda == "False" and transformers_version.startswith("4.57.")


def test_the_apps_own_python_path_does_not_reach_the_exporter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env = export_env()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "app-only"))
    paths = env.environment(extra_path=(tmp_path / "tools",))["PYTHONPATH"].split(os.pathsep)
    assert paths == [str(env.llmexport_dir()), str(tmp_path / "tools")]


def test_ready_means_stamped_with_todays_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = fake_export_env(tmp_path / "env")
    assert ready_export_env(env.folder) == env
    # A changed pin (a new transformers, say) rebuilds it.
    monkeypatch.setattr(
        export_env_module, "pinned_requirements", lambda: (*pinned_requirements(), "onnx==9")
    )
    assert ready_export_env(env.folder) is None
    assert not plan_export_env(env.folder).ready
    monkeypatch.undo()
    # Half-built: everything but the stamp, which is written last.
    (env.folder / STAMP).unlink()
    assert ready_export_env(env.folder) is None


def test_a_changed_lock_rebuilds_and_pip_gets_the_lock_as_constraints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = fake_export_env(tmp_path / "env")
    plan = plan_export_env(env.folder)
    assert plan.ready and "onnx==" in plan.constraints
    cmd = pip_command(env, plan, "http://127.0.0.1:9/whl/cpu")
    assert cmd[cmd.index("-c") + 1] == str(env.folder / CONSTRAINTS)
    assert cmd[cmd.index("--extra-index-url") + 1] == "http://127.0.0.1:9/whl/cpu"
    assert "--extra-index-url" not in pip_command(env, plan, "")
    # A regenerated lock (a new onnx, say) with the same direct pins rebuilds it.
    monkeypatch.setattr(
        export_env_module, "constraints_lock", lambda: plan.constraints + "onnx==9\n"
    )
    assert ready_export_env(env.folder) is None


def test_a_stamped_environment_whose_packages_are_gone_is_offered_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = fake_export_env(tmp_path / "env")
    site = env.llmexport_dir().parent
    shutil.rmtree(site / "onnx")  # a `pip uninstall onnx`, the stamp left as it was
    assert ready_export_env(env.folder) is None  # not "No module named 'onnx'" mid-export
    plan = plan_export_env(env.folder)
    assert not plan.ready and plan.damaged == f"no onnx in {site}"
    assert f"The export environment in {env.folder} is damaged: no onnx" in plan.describe()
    assert "made again" in plan.describe()
    monkeypatch.setenv(EXPORT_ENV_VAR, str(env.folder))
    out = tmp_path / "pack"
    assert (
        main(["export", str(HF_FIXTURES / "llama-tiny"), "--out", str(out), "--block", "64"]) == 1
    )
    err = capsys.readouterr().err
    assert "is damaged: no onnx" in err and "pass --yes" in err
    assert not out.exists() and (site / "torch").is_dir()  # nothing removed unasked


def test_every_requirement_is_pinned_to_one_version() -> None:
    for platform in ("linux", "win32", "darwin"):
        for pin in pinned_requirements(platform):
            assert "==" in pin and not any(c in pin.split(";")[0] for c in "<>,"), pin


def test_the_plan_says_where_and_how_much_before_anything_is_made(tmp_path: Path) -> None:
    plan = plan_export_env(tmp_path / "deep" / "env")
    assert not plan.ready and plan.fits() and plan.free_bytes > 0
    text = plan.describe()
    assert str(tmp_path / "deep" / "env") in text and "about 1.3 GB" in text
    assert "torch 2.13.0," in text and "llmexport 0.0.5" in text
    # Plain words: no pip syntax, and only the numpy this Python gets.
    assert not any(mark in text for mark in ("==", ";", "python_version", "+cpu", ".*"))
    assert text.count("numpy") == 1
    assert not (tmp_path / "deep").exists()


def _run(job: ExportEnvJob) -> threading.Thread:
    worker = threading.Thread(target=job.run)
    worker.start()
    return worker


def test_a_cancelled_build_removes_what_it_made(tmp_path: Path) -> None:
    folder = tmp_path / "env"
    job = ExportEnvJob(plan_export_env(folder))
    worker = _run(job)
    _wait_until(lambda: job.status().state == CREATING or job.is_finished())
    job.cancel()
    worker.join(300)
    assert job.status().state == CANCELLED
    assert not folder.exists()


def test_a_folder_draftdeck_did_not_make_is_neither_used_nor_emptied(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    job = ExportEnvJob(plan_export_env(folder))
    _run(job).join(300)
    assert job.status().state == FAILED
    assert "not empty and DraftDeck did not make it" in job.status().error
    assert (folder / "thesis.tex").read_text() == "years of work"


def test_a_build_that_cannot_take_the_lock_leaves_the_folder_alone(tmp_path: Path) -> None:
    # The folder is another process's build in progress; this job never held the lock
    # (here its lock file cannot even be opened), so it must not remove that build.
    folder = tmp_path / "env"
    folder.mkdir()
    (folder / OWNER_MARK).write_text("made by DraftDeck for exporting\n")
    (folder / "pyvenv.cfg").write_text("home = elsewhere\n")
    (tmp_path / "env.lock").mkdir()
    job = ExportEnvJob(plan_export_env(folder))
    _run(job).join(300)
    assert job.status().state == FAILED and "env.lock" in job.status().error
    assert sorted(p.name for p in folder.iterdir()) == sorted([OWNER_MARK, "pyvenv.cfg"])


@pytest.mark.parametrize(
    ("command", "code", "nothing_done"),
    [("export", 1, "nothing was exported"), ("verify-export", 2, "nothing was verified")],
)
def test_the_commands_ask_before_creating_the_environment(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    code: int,
    nothing_done: str,
) -> None:
    folder = tmp_path / "env"
    monkeypatch.setenv(EXPORT_ENV_VAR, str(folder))
    llama, out = HF_FIXTURES / "llama-tiny", tmp_path / "pack"
    if command == "export":
        args = [str(llama), "--out", str(out), "--block", "64"]
    else:  # a pack to verify (no matter which: nothing runs)
        shutil.copytree(FIXTURES / "qwen3-target", out)
        args = [str(out), str(llama)]
    assert main([command, *args]) == code
    err = capsys.readouterr().err
    assert f"about 1.3 GB in {folder}" in err  # the size and the folder, before anything
    assert "pass --yes to create it without asking" in err  # no terminal to answer on
    assert f"{nothing_done} (the export environment is needed)" in err
    assert not folder.exists()
    assert not (out / EXPORT_CHECK).exists() if command == "verify-export" else not out.exists()


def test_an_index_whose_name_does_not_resolve_is_left_out() -> None:
    # No DNS in tests: an unknown name is a resolver that fails as getaddrinfo does for
    # one; loopback and local folders resolve for real.
    def unknown(host: str, port: int) -> object:
        raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known: {host}")

    assert not index_resolves("https://download.pytorch.org/whl/cpu", unknown)
    assert index_resolves("http://127.0.0.1:8080/simple")
    assert index_resolves("file:///opt/wheels", unknown)
    asked: list[tuple[str, int]] = []
    assert index_resolves("https://mirror.example:8443/whl", lambda h, p: asked.append((h, p)))
    assert asked == [("mirror.example", 8443)]
