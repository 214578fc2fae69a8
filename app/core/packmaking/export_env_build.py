"""Creating the export environment (export_env.py) as a cancellable job: a venv, then one
`pip install` of the pinned requirements with the lock as constraints, whose output lines
are the progress, then a check that the exporter imports, then the stamp that makes it
ready.

Run it on a lane of its own (`JobQueue(1, ...)`) or call `run()` on a thread of your own;
`cancel()` from any thread kills pip and removes the half-built folder.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from app.core.infra.deletion import remove_tree
from app.core.infra.file_lock import exclusive_lock
from app.core.infra.job_queue import TrackedJob
from app.core.infra.jsonfile import atomic_write_bytes
from app.core.infra.words import Word
from app.core.packmaking.export_env import (
    CONSTRAINTS,
    OWNER_MARK,
    STAMP,
    ExportEnv,
    ExportEnvPlan,
    ready_export_env,
    stamp_for,
)
from app.core.packmaking.export_process import ProcessCancelled, StreamedProcess


class EnvBuildState(Word):
    QUEUED = "queued"
    CREATING = "creating"
    INSTALLING = "installing"
    CHECKING = "checking"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Module names for the states, as the dialog and tests import them.
QUEUED, CREATING = EnvBuildState.QUEUED, EnvBuildState.CREATING
INSTALLING, CHECKING = EnvBuildState.INSTALLING, EnvBuildState.CHECKING
DONE, FAILED, CANCELLED = EnvBuildState.DONE, EnvBuildState.FAILED, EnvBuildState.CANCELLED
FINISHED = (DONE, FAILED, CANCELLED)


@dataclass(frozen=True)
class EnvBuildStatus:
    state: EnvBuildState = QUEUED
    line: str = ""  # pip's (or the step's) latest output line
    lines: int = 0  # output lines so far (pip gives no total: a count shows it moves)
    error: str = ""  # why it failed, with pip's last lines


class ExportEnvJob(TrackedJob[EnvBuildStatus]):
    """Build the environment `plan` describes (nothing to do when it is ready)."""

    finished_states = FINISHED

    def __init__(self, plan: ExportEnvPlan) -> None:
        super().__init__(EnvBuildStatus())
        self.plan = plan
        self._process = StreamedProcess()

    def env(self) -> ExportEnv:
        """The environment, once the job is done."""
        env = ready_export_env(self.plan.folder)
        if env is None:
            raise RuntimeError(f"the export environment in {self.plan.folder} is not ready")
        return env

    def cancel(self) -> None:
        """Stop pip (its whole process group); the running job then removes what was
        built so far and ends cancelled."""
        self._process.cancel()
        self._set_if((QUEUED,), state=CANCELLED)

    def pause(self) -> None:
        """A build cannot resume half-way: pausing (the app closing) cancels it."""
        self.cancel()

    def restart(self) -> None:
        """Make a failed or cancelled build ready to run again (it starts over)."""
        self._process = StreamedProcess()
        self._set(state=QUEUED, line="", lines=0, error="")

    def run(self) -> EnvBuildStatus:
        if self.status().state == CANCELLED:
            return self.status()
        folder = self.plan.folder
        try:
            # One build per folder across processes; a second one finds it ready after.
            with exclusive_lock(folder.parent / f"{folder.name}.lock"):
                self._build_holding_lock(folder)
        except OSError as exc:  # the lock could not be taken: the folder is not ours now
            self._set(state=FAILED, error=str(exc))
        return self.status()

    def _build_holding_lock(self, folder: Path) -> None:
        """Build unless ready; a failed or cancelled build is removed before the lock is
        let go, so it never removes one another process has started since."""
        try:
            if ready_export_env(folder) is None:
                self._build(folder)
        except ProcessCancelled:
            _remove_own(folder)
            self._set(state=CANCELLED)
        except (OSError, BuildFailed) as exc:
            _remove_own(folder)
            self._set(state=FAILED, error=str(exc))
        else:
            self._set(state=DONE, line=f"ready: {folder}")

    def _build(self, folder: Path) -> None:
        _remove_own(folder)
        if folder.exists() and any(folder.iterdir()):
            raise BuildFailed(
                f"{folder} is not empty and DraftDeck did not make it; "
                "choose another folder for the export environment"
            )
        folder.mkdir(parents=True, exist_ok=True)
        (folder / OWNER_MARK).write_text("made by DraftDeck for exporting\n", encoding="utf-8")
        env = ExportEnv(folder)
        self._step(CREATING, [base_python(), "-m", "venv", str(folder)], folder)
        # pip reads constraints from a file: the lock goes into the environment itself.
        (folder / CONSTRAINTS).write_text(self.plan.constraints, encoding="utf-8")
        index = self.plan.torch_index
        if index and not index_resolves(index):
            # pip would retry an unknown host with back-off for every package it looks
            # up (about ten minutes for this environment) and then fail the same way.
            self._set(
                line=f"{index} cannot be reached (its name does not resolve): "
                "pip looks for torch where its own configuration says"
            )
            index = ""
        self._step(INSTALLING, pip_command(env, self.plan, index), folder)
        found = self._step(CHECKING, [str(env.python), "-c", _FIND_LLMEXPORT], folder)
        stamp = stamp_for(self.plan.requirements, self.plan.constraints, self.plan.torch_index)
        stamp["llmexport_dir"] = found[-1]
        atomic_write_bytes(folder / STAMP, json.dumps(stamp, indent=2).encode())

    def _step(self, state: EnvBuildState, cmd: list[str], folder: Path) -> tuple[str, ...]:
        self._set(state=state)

        def on_line(line: str) -> None:
            self._set(line=line, lines=self.status().lines + 1)

        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        with tempfile.TemporaryDirectory(prefix="draftdeck-env-") as cwd:
            done = self._process.run(cmd, env, Path(cwd), on_line)
        if done.returncode != 0:
            tail = "\n".join(done.tail[-12:])
            raise BuildFailed(f"{state} the export environment failed:\n{tail}")
        return done.tail


class BuildFailed(Exception):
    """A step of building the export environment failed (its message says which)."""


# Printed last by the check: the folder llmexport's own modules are imported from.
_FIND_LLMEXPORT = (
    "import importlib.util, os, torch, transformers, onnxscript, MNN, _tools; "
    "assert torch.version.cuda is None, 'a CUDA build of torch'; "
    "print('torch', torch.__version__, 'transformers', transformers.__version__); "
    "print(os.path.dirname(importlib.util.find_spec('llmexport').origin))"
)


def base_python() -> str:
    """The Python the environment is made from: the app's own, unless the app is a
    frozen build (then the system's python3)."""
    if not getattr(sys, "frozen", False):
        return sys.executable
    found = shutil.which("python3") or shutil.which("python")
    if found is None:
        raise BuildFailed("exporting needs Python 3.10 or later installed (python3 on PATH)")
    return found


def pip_command(env: ExportEnv, plan: ExportEnvPlan, torch_index: str) -> list[str]:
    cmd = [str(env.python), "-m", "pip", "install", "--progress-bar", "off"]
    cmd += ["-c", str(env.folder / CONSTRAINTS)]
    if torch_index:
        cmd += ["--extra-index-url", torch_index]
    return [*cmd, *plan.requirements]


Resolver = Callable[[str, int], object]


def index_resolves(url: str, resolve: Resolver = socket.getaddrinfo) -> bool:
    """Whether the index's host name resolves: a name lookup, no connection to it."""
    parts = urlsplit(url)
    if parts.scheme == "file" or not parts.hostname:
        return True  # a local index: pip reads it itself
    try:
        resolve(parts.hostname, parts.port or 443)
    except (OSError, UnicodeError):  # socket.gaierror is an OSError
        return False
    return True


def _remove_own(folder: Path) -> None:
    """Remove a (half-built or outdated) environment, only if DraftDeck made it."""
    if (folder / OWNER_MARK).is_file():
        remove_tree(folder)
