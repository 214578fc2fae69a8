"""The exporter and the verification's torch side run with transformers' trust in the
model folder's code set by DraftDeck, not by MNN's exporter (which always asks for it):
code that came into a folder after the check (or was never seen by it) cannot run unless
the user trusted the folder. Real transformers, real llmexport, in the export
environment; the hostile folder's evil.py writes a marker file when imported."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.infra.resources import resource
from app.core.pack.bundle import read_bundle
from app.core.packmaking.export_checks import ExportSettings, plan_export
from app.core.packmaking.export_process import StreamedProcess
from app.core.packmaking.export_run import DONE, LAUNCHER, ExportJob
from app.core.packmaking.verify_source import quant_spec, run_source
from app.core.packmaking.verify_texts import TEXTS
from tests.helpers.custom_code import AUTO_MAP, LLAMA, evil_folder
from tests.helpers.export_env import export_env

pytestmark = pytest.mark.slow

# What llmexport does with a folder (utils/config.py, utils/model.py), in a few lines.
LIKE_LLMEXPORT = (
    "import sys\n"
    "from transformers import AutoConfig\n"
    "config = AutoConfig.from_pretrained(sys.argv[1], trust_remote_code=True)\n"
    "print(type(config).__name__)\n"
)


@pytest.mark.parametrize(
    ("trust", "ran", "config_class"),
    [("trust", True, "EvilConfig"), ("no-trust", False, "LlamaConfig")],
)
def test_the_launcher_sets_the_trust_llmexport_asks_for(
    tmp_path: Path, trust: str, ran: bool, config_class: str
) -> None:
    env = export_env()
    marker = tmp_path / "evil-ran"
    folder = evil_folder(tmp_path / "model", marker)
    script = tmp_path / "like_llmexport.py"
    script.write_text(LIKE_LLMEXPORT, encoding="utf-8")
    done = subprocess.run(
        [str(env.python), str(resource(*LAUNCHER)), trust, str(script), str(folder)],
        env=env.environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == config_class  # untrusted: transformers' own class
    assert marker.exists() == ran


def test_code_sneaked_in_after_the_check_does_not_run_in_the_export_or_the_check(
    tmp_path: Path,
) -> None:
    env = export_env()
    marker = tmp_path / "evil-ran"
    plan = plan_export(LLAMA, tmp_path / "pack", ExportSettings(block=64))  # checked clean
    # Then the folder is one with code: auto_map and evil.py, unseen by the check.
    folder = evil_folder(tmp_path / "model", marker)
    plan = replace(plan, source=replace(plan.source, folder=folder))
    assert json.loads((folder / "config.json").read_text())["auto_map"] == AUTO_MAP
    job = ExportJob(env, plan)
    status = job.run()
    assert status.state == DONE, status.error
    assert not marker.exists()  # llmexport asked to trust it; the launcher said no
    # The verification's torch side, given the same folder untrusted.
    info = read_bundle(job.partial)
    work = tmp_path / "work"
    work.mkdir()
    run_source(env, folder, quant_spec(info), TEXTS[:1], work, StreamedProcess(), print)
    assert not marker.exists()
    job.discard()
