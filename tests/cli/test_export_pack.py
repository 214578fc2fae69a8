"""Making packs with MNN's exporter in the export environment, through `draftdeck
export`: a tiny Qwen3 with the real Qwen tokenizer (a draft, --no-verify) and a tiny
Llama (a target, verified against its source and added to the Library), read back as
packs and run by the engine; a made pack that fails its verification is left as made
and not listed; Ctrl+C in the middle of an export leaves nothing, and during its
verification puts the pack in place recorded as not verified (interrupted)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from app.cli.export import verify_made_pack
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.export_check import read_export_check
from app.core.pack.files import EXPORT_CHECK
from app.core.pack.library import Library
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


def _cli_env(home: Path) -> dict[str, str]:
    """The command's environment: the cached export environment and a DraftDeck home of
    the test's own (module fixtures run before the per-test home is set)."""
    return {**os.environ, EXPORT_ENV_VAR: str(export_env().folder), "DRAFTDECK_HOME": str(home)}


def _export(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*APP, "export", *args],
        env=_cli_env(home),
        capture_output=True,
        text=True,
        timeout=900,
    )


def _listed(home: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The packs the Library of `home` lists by reference."""
    monkeypatch.setenv("DRAFTDECK_HOME", str(home))
    return [
        p
        for p, by_reference in Library(load_settings(), save_settings).pack_folders()
        if by_reference
    ]


@pytest.fixture(scope="module")
def qwen3_export(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    root = tmp_path_factory.mktemp("made")
    out = root / "qwen3 draft"  # a space: llmexport uses a shell
    args = ["--out", str(out), "--block", "64", "--role", "draft", "--no-verify"]
    return _export(root / "home", str(hf_folder("qwen3-realtok")), *args), out, root / "home"


@pytest.fixture(scope="module")
def qwen3_pack(qwen3_export: tuple[subprocess.CompletedProcess[str], Path, Path]) -> BundleInfo:
    done, out, _ = qwen3_export
    assert done.returncode == 0, done.stderr
    assert "load pretrained model" in done.stderr  # the exporter's progress came through
    return read_bundle(out)


@pytest.fixture(scope="module")
def llama_export(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    root = tmp_path_factory.mktemp("made")
    out = root / "llama"
    args = ["--out", str(out), "--block", "32", "--role", "target"]
    return _export(root / "home", str(hf_folder("llama-tiny")), *args), out, root / "home"


@pytest.fixture(scope="module")
def llama_pack(llama_export: tuple[subprocess.CompletedProcess[str], Path, Path]) -> BundleInfo:
    done, out, _ = llama_export
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
    siblings = [p.name for p in qwen3_pack.path.parent.iterdir() if p.name != "home"]
    assert siblings == [qwen3_pack.path.name]  # no partial folder left beside it


def test_an_export_not_verified_on_request_is_said_and_not_listed(
    qwen3_export: tuple[subprocess.CompletedProcess[str], Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done, out, home = qwen3_export
    assert done.returncode == 0, done.stderr
    assert "not verified (--no-verify), so not added to the Library" in done.stderr
    assert f"`draftdeck verify-export {out} " in done.stderr  # how to check it later
    assert not (out / EXPORT_CHECK).exists()
    assert _listed(home, monkeypatch) == []


def test_a_tiny_llama_becomes_a_target_pack(llama_pack: BundleInfo) -> None:
    assert llama_pack.model_type == "llama"
    assert (llama_pack.hidden_size, llama_pack.quant_block) == (64, 32)
    assert llama_pack.role != "draft" and "config_cpu.json" not in llama_pack.recipe_files


def test_the_export_is_verified_and_the_pack_added_to_the_library(
    llama_pack: BundleInfo,
    llama_export: tuple[subprocess.CompletedProcess[str], Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done, out, home = llama_export
    assert "pack at memory normal" in done.stderr  # verify-export's check ran, with progress
    quantization = "asymmetric 4-bit, block 32; lm_head and embedding tied at 4-bit"
    assert f"Export verified ({quantization})" in done.stdout
    assert json.loads((out / EXPORT_CHECK).read_text(encoding="utf-8"))["verified"] is True
    assert f"llama is in the Library ({out})" in done.stdout  # where it is
    assert _listed(home, monkeypatch) == [out]  # by reference: it stays where it was made


def test_a_made_pack_that_fails_verification_is_left_as_made_and_not_listed(
    llama_pack: BundleInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "tampered"
    shutil.copytree(llama_pack.path, pack)
    (pack / EXPORT_CHECK).unlink()
    # The tied embedding / lm_head rows' 4-bit values flipped, no header touched: MNN
    # loads the file and computes another function (test_verify_export.py's way).
    tie = json.loads((pack / "llm_config.json").read_text())["tie_embeddings"]
    start, end = tie[:2] if isinstance(tie, list) else (tie["weight_offset"], tie["alpha_offset"])
    data = bytearray((pack / "llm.mnn.weight").read_bytes())
    data[start:end] = bytes(b ^ 0x5A for b in data[start:end])
    (pack / "llm.mnn.weight").write_bytes(bytes(data))
    # What `draftdeck export` runs once the exporter has made the pack (here: copied
    # the tampered one into its partial folder).
    out = tmp_path / "made"
    job = _Copying(
        export_env(), plan_export(hf_folder("llama-tiny"), out, ExportSettings(block=32))
    )
    job.pack = pack
    assert job.run().state == DONE, job.status().error
    assert not out.exists()  # checked where it was made, before it is put in place
    assert verify_made_pack(export_env(), job) == 1
    said = capsys.readouterr()
    assert "Export not verified" in said.out and "its weights are not the source's" in said.out
    assert "draftdeck: export not verified (what differs is above" in said.err
    assert f"{out} is left as made and not added to the Library" in said.err
    check = json.loads((out / EXPORT_CHECK).read_text(encoding="utf-8"))
    assert check["verified"] is False and check["pack"] == str(out)
    assert read_bundle(out).path == out  # the pack is left to look at
    assert not job.partial.exists()
    assert Library(load_settings(), save_settings).pack_folders() == []


class _Copying(ExportJob):
    """An export job whose "exporter" copies the pack `pack` into its folder."""

    pack = Path()

    def command(self, shim: Path) -> list[str]:
        copy = f"import shutil; shutil.copytree({str(self.pack)!r}, '.', dirs_exist_ok=True)"
        return [sys.executable, "-c", copy]


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl+C is a POSIX signal here")
def test_ctrl_c_during_the_verification_records_it_as_not_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, home = tmp_path / "pack", tmp_path / "home"
    args = [str(hf_folder("llama-tiny")), "--out", str(out), "--block", "64"]
    with subprocess.Popen(
        [*APP, "export", *args],
        env=_cli_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        seen = []
        for line in proc.stderr:  # the check has begun: it knows the pack's quantization
            seen.append(line)
            if line.startswith("quantization:"):
                break
        assert not out.exists(), seen  # the pack is checked in its partial folder
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=300) == 130, rest
    assert "made but not verified: the check was interrupted" in rest
    check = read_export_check(out)  # in place, and never as if it had not been checked
    assert check is not None and not check.verified
    assert check.words().startswith("Export not verified: Interrupted:")
    assert _listed(home, monkeypatch) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


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
        env=_cli_env(tmp_path / "home"),
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
