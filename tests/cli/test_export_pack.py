"""Making packs with MNN's exporter in the export environment: a tiny Qwen3 with the real
Qwen tokenizer (a draft) and a tiny Llama (a target, through `draftdeck export`), read
back as packs and run by the engine; Ctrl+C in the middle of an export leaves nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.packmaking.export_checks import ExportSettings, plan_export
from app.core.packmaking.export_env import EXPORT_ENV_VAR
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.export_run import DONE, PARTIAL_SUFFIX, ExportJob
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Generate, Load
from tests.helpers.cli import APP
from tests.helpers.export_env import export_env, hf_folder

pytestmark = pytest.mark.slow
NORMAL = {"memory": "normal", "thread_num": 1}


def _cli_env() -> dict[str, str]:
    return {**os.environ, EXPORT_ENV_VAR: str(export_env().folder)}


@pytest.fixture(scope="module")
def qwen3_pack(tmp_path_factory: pytest.TempPathFactory) -> BundleInfo:
    out = tmp_path_factory.mktemp("made") / "qwen3 draft"  # a space: llmexport uses a shell
    plan = plan_export(hf_folder("qwen3-realtok"), out, ExportSettings(block=64, role="draft"))
    job = ExportJob(export_env(), plan)
    status = job.run()
    assert status.state == DONE, status.error
    assert status.lines > 0  # the exporter's progress came through
    return job.bundle()


@pytest.fixture(scope="module")
def llama_pack(tmp_path_factory: pytest.TempPathFactory) -> BundleInfo:
    out = tmp_path_factory.mktemp("made") / "llama"
    args = [str(hf_folder("llama-tiny")), "--out", str(out), "--block", "32", "--role", "target"]
    done = subprocess.run(
        [*APP, "export", *args],
        env=_cli_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert f"made {out}" in done.stdout
    assert "export onnx model" in done.stderr  # the exporter's progress, on stderr
    return read_bundle(out)


def test_a_qwen3_with_the_real_tokenizer_becomes_a_draft_pack(qwen3_pack: BundleInfo) -> None:
    assert qwen3_pack.model_type == "qwen3"
    assert (qwen3_pack.hidden_size, qwen3_pack.layers) == (64, 2)
    assert qwen3_pack.vocab_size == 151936
    assert (qwen3_pack.quant_bits, qwen3_pack.quant_block) == (4, 64)
    assert qwen3_pack.role == "draft" and "config_cpu.json" in qwen3_pack.recipe_files
    names = {f.name for f in qwen3_pack.files}
    assert not names & {"export_args.json", "llm.mnn.json", ".export.log", "mnnconvert"}
    mark = json.loads((qwen3_pack.path / EXPORT_MARK).read_text())
    assert mark["settings"] == {"bits": 4, "block": 64, "role": "draft"}
    assert mark["source"] == str(hf_folder("qwen3-realtok"))
    siblings = [p.name for p in qwen3_pack.path.parent.iterdir()]
    assert siblings == [qwen3_pack.path.name]  # no partial folder left beside it


def test_a_tiny_llama_becomes_a_target_pack(llama_pack: BundleInfo) -> None:
    assert llama_pack.model_type == "llama"
    assert (llama_pack.hidden_size, llama_pack.quant_block) == (64, 32)
    assert llama_pack.role != "draft" and "config_cpu.json" not in llama_pack.recipe_files


def test_the_engine_runs_the_made_packs(qwen3_pack: BundleInfo, llama_pack: BundleInfo) -> None:
    with EngineClient() as client:
        # The draft with itself as target: at memory normal an identical draft agrees
        # on every token.
        client.run(
            Load(
                target=str(qwen3_pack.path),
                draft=str(qwen3_pack.path),
                target_config=NORMAL,
                draft_config=NORMAL,
                draft_length=3,
            ),
            timeout=120,
        )
        done = client.run(Generate(prompt="Hello", max_tokens=12, ignore_stop=True), timeout=120)
        assert len(done.tokens) == 12
        assert done.stats.accepted == done.stats.drafted > 0
        client.run(Load(target=str(llama_pack.path), target_config=NORMAL), timeout=120)
        done = client.run(Generate(prompt="Hello", max_tokens=8, ignore_stop=True), timeout=120)
        assert len(done.tokens) == 8


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl+C is a POSIX signal here")
def test_ctrl_c_in_the_middle_of_an_export_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "packs" / "pack"
    out.parent.mkdir()
    with subprocess.Popen(
        [*APP, "export", str(hf_folder("llama-tiny")), "--out", str(out), "--block", "64"],
        env=_cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # the exporter's first line: it is running
            seen.append(line)
            if "load pretrained model" in line:
                break
        exporters = [
            c
            for c in psutil.Process(proc.pid).children(recursive=True)
            if "llmexport" in " ".join(c.cmdline())
        ]
        assert exporters, seen
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=300) == 130, rest
    assert "export cancelled; nothing was left in" in rest
    assert list(out.parent.iterdir()) == [], rest  # neither the pack nor its partial folder
    _, alive = psutil.wait_procs(exporters, timeout=60)
    assert alive == []  # the exporter and what it started were killed with it


def test_the_partial_folder_is_hidden_and_shell_safe(tmp_path: Path) -> None:
    plan = plan_export(hf_folder("llama-tiny"), tmp_path / "my pack (v2)", ExportSettings(block=64))
    partial = ExportJob(export_env(), plan).partial
    assert partial.parent == tmp_path
    assert partial.name == f".my_pack__v2_{PARTIAL_SUFFIX}"
