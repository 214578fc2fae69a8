"""Model folders are code until the user says otherwise (custom_code.py): a folder whose
config names code (`auto_map`) or that holds `*.py` files is refused by export and
verify-export unless trusted, naming the files and saying how to trust it; a Hub repo is
downloaded without its code unless trusted.

The hostile folder is the tiny Llama with an `evil.py` that, if anything ever imports
it, writes a marker file: every test also asserts the marker never appears.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.hub.hub_api import HubConfig
from app.core.packmaking.custom_code import CustomCodeRefused, custom_code
from app.core.packmaking.export_checks import ExportSettings, plan_export
from app.core.packmaking.export_run import source_folder
from tests.helpers.custom_code import LLAMA, evil_folder
from tests.helpers.paths import FIXTURES
from tests.hub_server import FakeHub


def test_a_folder_that_names_its_own_code_is_refused_naming_it(tmp_path: Path) -> None:
    marker = tmp_path / "evil-ran"
    folder = evil_folder(tmp_path / "model", marker)
    with pytest.raises(CustomCodeRefused) as refused:
        plan_export(folder, tmp_path / "pack", ExportSettings(block=64))
    message = refused.value.message
    assert str(folder) in message and "evil.py" in message
    assert "auto_map: evil.EvilConfig, evil.EvilModel" in message
    assert "with your rights" in message
    # Trusted, the plan says so (the exporter is then allowed to run it).
    plan = plan_export(folder, tmp_path / "pack", ExportSettings(block=64), trust_remote_code=True)
    assert plan.trust_remote_code
    assert not marker.exists()


def test_code_in_the_tokenizer_config_or_a_lone_py_file_counts_too(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(LLAMA, folder)
    assert custom_code(folder) == ()
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    tokenizer_config["auto_map"] = {"AutoTokenizer": ["tok.SlowTok", None]}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    (folder / "extra").mkdir()
    (folder / "extra" / "helper.py").write_text("")
    found = custom_code(folder)
    assert found[0] == "tokenizer_config.json names code to run (auto_map: tok.SlowTok)"
    assert found[1:] == (str(Path("extra") / "helper.py"),)


def test_the_export_command_refuses_and_says_how_to_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "evil-ran"
    folder = evil_folder(tmp_path / "model", marker)
    out = tmp_path / "pack"
    assert main(["export", str(folder), "--out", str(out), "--block", "64", "--yes"]) == 2
    err = capsys.readouterr().err
    assert "evil.py" in err and "--trust-remote-code" in err
    assert not out.exists() and not marker.exists()


def test_verify_export_refuses_a_source_with_code_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "evil-ran"
    folder = evil_folder(tmp_path / "model", marker)
    pack = tmp_path / "pack"
    shutil.copytree(FIXTURES / "qwen3-target", pack)
    assert main(["verify-export", str(pack), str(folder), "--yes"]) == 2
    err = capsys.readouterr().err
    assert "evil.py" in err and "--trust-remote-code" in err
    assert "export environment" not in err  # refused before it is offered or used
    assert not marker.exists()


def test_a_hub_repo_is_downloaded_without_its_code_unless_trusted(tmp_path: Path) -> None:
    marker = tmp_path / "evil-ran"
    folder = evil_folder(tmp_path / "model", marker)
    with FakeHub() as hub:
        hub.add_folder("someone/evil-llama", folder)
        config = HubConfig(endpoint=hub.endpoint, token=False)
        untrusted = source_folder("someone/evil-llama", config, cache_dir=tmp_path / "a")
        trusted = source_folder("someone/evil-llama", config, tmp_path / "b", True)
    assert (untrusted / "config.json").is_file() and not (untrusted / "evil.py").exists()
    assert (trusted / "evil.py").is_file()
    # Without its code the config still names it: refused all the same.
    with pytest.raises(CustomCodeRefused, match=r"auto_map: evil\.EvilConfig"):
        plan_export(untrusted, tmp_path / "pack", ExportSettings(block=64))
    assert not marker.exists()
