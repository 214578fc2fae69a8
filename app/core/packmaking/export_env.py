"""The separate Python environment MNN's exporter runs in (torch CPU, transformers 4.57,
llmexport), created by DraftDeck on first use and never inside the app's own environment.

Where: `<data folder>/export-env`, or the folder `DRAFTDECK_EXPORT_ENV` names (tests and
CI point it at a cache folder in the repository so it is built once and reused). The
extra package index for torch's CPU build is `DRAFTDECK_TORCH_INDEX` (default PyTorch's
CPU index; an empty value turns it off, for a machine whose pip finds the CPU wheel by
its own configuration, e.g. find-links).

Every requirement is pinned, and pip installs them with the lock of every indirect
dependency as constraints (resources/export-env-lock.txt, a copy of
locks/export-env.txt: scripts/lock.py writes both), so two machines build the same
environment. An environment is ready when its stamp file lists exactly today's pinned
requirements and the lock's digest: the stamp is
written last, after pip finished and the exporter imported, so a half-built environment
(a cancel, a crash, a full disk) is never taken for a ready one, and a changed pin or
lock rebuilds it. DraftDeck only ever deletes a folder it marked as its own when it
began creating it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import Marker

from app.core.infra.resources import read_text
from app.core.infra.units import format_bytes
from app.core.packmaking.export_space import free_bytes

EXPORT_ENV_VAR = "DRAFTDECK_EXPORT_ENV"
TORCH_INDEX_VAR = "DRAFTDECK_TORCH_INDEX"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
STAMP = "draftdeck-export-env.json"  # written last: the environment is ready
OWNER_MARK = ".draftdeck-export-env"  # written first: DraftDeck made this folder
CONSTRAINTS = "draftdeck-constraints.txt"  # the lock, written into the folder for pip
LOCK_RESOURCE = "export-env-lock.txt"

# The one size figure of the environment, said in the question and asked for free:
# `du -sh` of one built with these pins on Linux x86_64, Python 3.11 (the tests'
# .venv-export-cache, 2026-12-04) says 1.3G (1,305,422,673 bytes); du rounds up, and so
# does this figure, which leaves a little room for pip's unpacking.
ENV_DISK_BYTES = 13 * 1024**3 // 10


def export_env_folder() -> Path:
    """Where the export environment lives (DRAFTDECK_EXPORT_ENV, else the data folder)."""
    chosen = os.environ.get(EXPORT_ENV_VAR)
    if chosen:
        return Path(chosen)
    # Imported here: make_bundles uses this module in the exporter's environment, which
    # has no platformdirs.
    from app.core.infra.paths import app_dirs

    return app_dirs().data / "export-env"


def torch_index() -> str:
    """The extra index torch's CPU build comes from; "" when turned off."""
    return os.environ.get(TORCH_INDEX_VAR, TORCH_CPU_INDEX).strip()


def pinned_requirements(platform: str = sys.platform) -> tuple[str, ...]:
    """What the environment holds, pinned. torch is always the CPU build: on Linux and
    Windows that is `+cpu` (a bare torch pulls a multi-GB CUDA build); macOS wheels are
    CPU (and Metal) builds already."""
    torch = "torch==2.13.0" if platform == "darwin" else "torch==2.13.0+cpu"
    return (
        torch,
        "transformers==4.57.*",
        "llmexport==0.0.5",
        "onnxscript==0.7.2",
        "protobuf==7.36.2",
        "mnn==3.6.1",
        "safetensors==0.8.0",
        # numpy 2.4 needs Python 3.11; the environment is made with the app's Python.
        'numpy==2.4.6; python_version >= "3.11"',
        'numpy==2.2.6; python_version < "3.11"',
    )


def constraints_lock() -> str:
    """The pins of every indirect dependency (pip's constraints for the build)."""
    return read_text(LOCK_RESOURCE)


def lock_digest(lock: str) -> str:
    return hashlib.sha256(lock.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ExportEnvPlan:
    """What creating the environment means, for asking the user first."""

    folder: Path
    requirements: tuple[str, ...]
    constraints: str  # the lock's text (constraints_lock)
    torch_index: str  # "" = pip's own configuration only
    disk_bytes: int  # about what it takes on disk once built
    free_bytes: int  # free space where it goes now
    ready: bool  # already built with these pins: nothing to do
    damaged: str = ""  # built once, but what it lacks now: it is made again

    def describe(self) -> str:
        """One paragraph for a question or a log line."""
        if self.ready:
            return f"The export environment in {self.folder} is ready."
        index = f" (torch from {self.torch_index})" if self.torch_index else ""
        if self.damaged:
            return (
                f"The export environment in {self.folder} is damaged: {self.damaged}. "
                f"It has to be made again: about {format_bytes(self.disk_bytes)} "
                f"({format_bytes(self.free_bytes)} free there), downloaded{index}."
            )
        return (
            f"Exporting needs a separate Python environment with torch (CPU), transformers "
            f"and MNN's exporter: about {format_bytes(self.disk_bytes)} in {self.folder} "
            f"({format_bytes(self.free_bytes)} free there), downloaded once{index}. "
            f"It installs {requirement_words(self.requirements)}."
        )

    def fits(self) -> bool:
        return self.ready or self.free_bytes >= self.disk_bytes


def requirement_words(requirements: tuple[str, ...]) -> str:
    """The pins in plain words for a person ("torch 2.13.0, transformers 4.57, ..."):
    those whose pip marker holds on this machine, without the marker or pip's syntax."""
    words = []
    for requirement in requirements:
        pin, _, marker = requirement.partition(";")
        if marker.strip() and not Marker(marker.strip()).evaluate():
            continue
        name, _, version = pin.strip().partition("==")
        words.append(f"{name} {version.removesuffix('.*').removesuffix('+cpu')}".strip())
    return ", ".join(words)


def plan_export_env(folder: Path | None = None) -> ExportEnvPlan:
    """The plan for the environment at `folder` (default `export_env_folder()`)."""
    folder = folder or export_env_folder()
    ready = ready_export_env(folder) is not None
    return ExportEnvPlan(
        folder=folder,
        requirements=pinned_requirements(),
        constraints=constraints_lock(),
        torch_index=torch_index(),
        disk_bytes=ENV_DISK_BYTES,
        free_bytes=free_bytes(folder),
        ready=ready,
        damaged="" if ready else missing_packages(folder),
    )


def stamp_for(requirements: tuple[str, ...], constraints: str, index: str) -> dict[str, Any]:
    """What the stamp of an environment built from these pins and lock holds."""
    return {
        "version": 1,
        "requirements": list(requirements),
        "constraints_sha256": lock_digest(constraints),
        "torch_index": index,
    }


@dataclass(frozen=True)
class ExportEnv:
    """A ready export environment."""

    folder: Path

    @property
    def python(self) -> Path:
        """Its interpreter (Scripts\\python.exe on Windows, bin/python elsewhere)."""
        if os.name == "nt":
            return self.folder / "Scripts" / "python.exe"
        return self.folder / "bin" / "python"

    def llmexport_dir(self) -> Path:
        """The installed llmexport package folder (it must be on PYTHONPATH: it imports
        its own `utils` as a top-level module)."""
        return Path(str(_read_stamp(self.folder).get("llmexport_dir", "")))

    def environment(self, extra_path: tuple[Path, ...] = ()) -> dict[str, str]:
        """Variables for a child process run with `self.python`: llmexport's folder and
        `extra_path` importable, offline, quiet, deterministic (`exporter_env`). The
        app's own PYTHONPATH and virtual environment are left out: nothing of the app's
        environment may shadow the export environment's packages."""
        base = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
        env = exporter_env(self.llmexport_dir(), base)
        extra = os.pathsep.join(str(p) for p in extra_path)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env["PYTHONPATH"], extra]))
        return env


_NOT_INHERITED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")


def _read_stamp(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stamped(folder: Path) -> bool:
    """Whether `folder` was built with today's pins (the stamp says so)."""
    stamp = _read_stamp(folder)
    wanted = stamp_for(pinned_requirements(), constraints_lock(), torch_index())
    # The index it came from does not matter once built.
    return all(stamp.get(k) == v for k, v in wanted.items() if k != "torch_index")


# What the exporter and the verification import, as folders in site-packages (where
# llmexport is): a stamp outlives packages removed since ("No module named 'onnx'").
KEY_PACKAGES = (
    "torch",
    "transformers",
    "onnx",
    "onnxscript",
    "MNN",
    "safetensors",
    "numpy",
    "google/protobuf",
)


def missing_packages(folder: Path) -> str:
    """What a stamped environment lacks now, in words ("" when it is whole or was never
    built with today's pins)."""
    if not _stamped(folder):
        return ""
    env = ExportEnv(folder)
    if not env.python.is_file():
        return f"no {env.python.relative_to(folder)}"
    exporter = env.llmexport_dir() / "llmexport.py"
    if not exporter.is_file():
        return f"no {exporter}"
    site = exporter.parent.parent
    gone = [name for name in KEY_PACKAGES if not (site / name / "__init__.py").is_file()]
    return f"no {', '.join(gone)} in {site}" if gone else ""


def ready_export_env(folder: Path | None = None) -> ExportEnv | None:
    """The environment at `folder` if it is built with today's pins and still has its
    interpreter and key packages, else None."""
    folder = folder or export_env_folder()
    if not _stamped(folder) or missing_packages(folder):
        return None
    return ExportEnv(folder)


# The converter llmexport is told to use: pymnn's converter core called directly.
# llmexport otherwise imports MNN.tools, whose logger pip-installs aliyun-log-python-sdk
# and contacts a telemetry endpoint.
MNNCONVERT_CODE = "import sys, _tools; _tools.mnnconvert(sys.argv)"


def write_mnnconvert_shim(python: Path, folder: Path) -> Path:
    """Write the converter command for llmexport's `--mnnconvert` into `folder`.

    llmexport joins the converter's arguments into one shell command line (os.popen), so
    the command is a small script whose own name has no spaces, run by `python` wherever
    that is (macOS's data folder, "Application Support", has a space)."""
    if sys.platform == "win32":
        path = folder / "mnnconvert.cmd"
        # newline="": written as it is (text mode on Windows would make "\r\r\n").
        line = f'@"{python}" -c "{MNNCONVERT_CODE}" %*\r\n'
        path.write_text(line, encoding="utf-8", newline="")
        return path
    path = folder / "mnnconvert"
    code = shlex.quote(MNNCONVERT_CODE)
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(str(python))} -c {code} "$@"\n')
    path.chmod(0o755)
    return path


def mnnconvert_arg(shim: Path) -> str:
    """What llmexport's `--mnnconvert` is given for `shim`, run from the shim's folder.

    llmexport checks the path with os.path.exists, then makes it the first word of a
    command line it joins with spaces and hands to the shell (utils/mnn_converter.py
    `convert`: os.popen), so the path is relative: a folder with a space could not be
    named whole. POSIX sh runs `./mnnconvert`; cmd.exe reads the `/` of
    `./mnnconvert.cmd` as a switch ("'.' is not recognized as an internal or external
    command"), so Windows gets `.\\mnnconvert.cmd`."""
    if sys.platform == "win32":
        return f".\\{shim.name}"
    return f"./{shim.name}"


def exporter_env(package_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment an exporter runs in: its own folder importable (else "No module
    named 'utils'"), offline, quiet and deterministic. `base` defaults to os.environ."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_dir), env.get("PYTHONPATH")]))
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONHASHSEED="0",
        TRANSFORMERS_VERBOSITY="error",
        PYTHONWARNINGS="ignore",
        PYTHONUNBUFFERED="1",  # its progress arrives as it is printed, not at the end
    )
    return env
