"""Every fixture bundle is described as the generator built it (tests/fixtures/README.md)."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.main import main
from app.core.infra.errors import FileError
from app.core.pack.bundle import read_bundle
from tests.helpers.cli import run_cli
from tests.helpers.strategies import json_values

Fixture = Callable[[str], Path]
# Stop ids: <|im_end|> from the header, and <|endoftext|> as for every Qwen model.
QWEN3_TOKENS = {"type": "pipeline", "special_ids": [1200, 1202, 1201], "stop_ids": [1202, 1200]}
# Ground truth: the shapes make_bundles.py builds (README table).
EXPECTED: dict[str, dict[str, Any]] = {
    "qwen3-target": {
        "model_type": "qwen3",
        "hidden_size": 128,
        "layers": 2,
        "vocab_size": 1280,
        "role": "either",
        "recipes": ["config.json"],
    },
    "qwen3-draft-identical": {
        "model_type": "qwen3",
        "hidden_size": 128,
        "layers": 2,
        "vocab_size": 1280,
        "role": "draft",
        "recipes": ["config.json", "config_cpu.json"],
    },
    "qwen3-draft-noisy": {
        "model_type": "qwen3",
        "hidden_size": 128,
        "layers": 2,
        "vocab_size": 1280,
        "role": "draft",
        "recipes": ["config.json", "config_cpu.json", "runtime_config.json"],
    },
    "qwen3-draft-independent": {
        "model_type": "qwen3",
        "hidden_size": 128,
        "layers": 2,
        "vocab_size": 1280,
        "role": "draft",
        "recipes": ["config.json", "config_cpu.json"],
    },
    "qwen35-draft": {
        "model_type": "qwen3_5",
        "hidden_size": 128,
        "layers": 4,
        "vocab_size": 1536,
        "role": "draft",
        "attention": "mix",
        "linear_attention": True,
        "recipes": ["config.json", "config_cpu.json"],
    },
    "fast-target": {
        "model_type": "qwen3",
        "hidden_size": 256,
        "layers": 12,
        "vocab_size": 1280,
        "role": "either",
        "recipes": ["config.json"],
    },
    "fast-draft": {
        "model_type": "qwen3",
        "hidden_size": 256,
        "layers": 2,
        "vocab_size": 1280,
        "role": "draft",
        "recipes": ["config.json", "config_cpu.json"],
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_is_described_correctly(
    name: str, fixture_bundle: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fixture_bundle(name)
    assert main(["info", str(folder), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    want = EXPECTED[name]
    assert info["model_type"] == want["model_type"]
    assert info["hidden_size"] == want["hidden_size"]
    assert info["layers"] == want["layers"]
    assert info["vocab_size"] == want["vocab_size"]
    assert info["attention"] == want.get("attention", "full")
    assert info["linear_attention"] is want.get("linear_attention", False)
    assert info["quant_bits"] == 4 and info["quant_block"] == 128
    assert info["role"] == want["role"]
    assert info["recipe_files"] == want["recipes"]
    assert info["visual"] is False
    tok = info["tokenizer"]
    assert tok["file"] == "tokenizer.mtok"
    if name.startswith("qwen35"):
        assert tok["stop_ids"] == [1502, 1500]  # <|im_end|>, and Qwen's <|endoftext|>
        assert len(tok["special_ids"]) == 7
    else:
        for key, value in QWEN3_TOKENS.items():
            assert tok[key] == value
    on_disk = {p.name: p.stat().st_size for p in folder.iterdir() if p.is_file()}
    assert {f["name"]: f["size"] for f in info["files"]} == on_disk
    assert info["size_bytes"] == sum(on_disk.values())
    assert len(info["chat_template_sha256"]) == 64


def test_same_tokenizer_same_hash(fixture_bundle: Fixture) -> None:
    a = read_bundle(fixture_bundle("qwen3-target"))
    b = read_bundle(fixture_bundle("qwen3-draft-noisy"))
    c = read_bundle(fixture_bundle("qwen35-draft"))
    assert a.tokenizer.sha256 == b.tokenizer.sha256 != c.tokenizer.sha256
    assert a.chat_template_sha256 == b.chat_template_sha256


def test_config_without_tokenizer_file_finds_mtok(bundle_copy: Callable[..., Path]) -> None:
    pack = bundle_copy()
    config = json.loads((pack / "config.json").read_text())
    del config["tokenizer_file"]
    (pack / "config.json").write_text(json.dumps(config))
    assert read_bundle(pack).tokenizer.file == "tokenizer.mtok"


def test_hidden_cache_folders_are_not_pack_files(bundle_copy: Callable[..., Path]) -> None:
    pack = bundle_copy()
    (pack / ".cache" / "huggingface").mkdir(parents=True)
    (pack / ".cache" / "huggingface" / "x.lock").write_text("lock")
    assert all(not f.name.startswith(".") for f in read_bundle(pack).files)


def test_info_cli_reports_broken_bundle(bundle_copy: Callable[..., Path]) -> None:
    pack = bundle_copy()
    (pack / "llm.mnn.weight").write_bytes(b"")
    proc = run_cli("info", str(pack), "--json", timeout=60)
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "empty_file"
    assert error["file"] == str(pack / "llm.mnn.weight")
    assert "weight file is empty" in proc.stderr


def test_info_cli_human_output(fixture_bundle: Fixture, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(fixture_bundle("qwen35-draft"))]) == 0
    out = capsys.readouterr().out
    assert "qwen3_5" in out and "LinearAttention" in out and "1536" in out


bundle_keys = st.sampled_from(
    [
        "model_type",
        "hidden_size",
        "layer_nums",
        "attention_type",
        "tie_embeddings",
        "jinja",
        "is_visual",
        "sliding_window",
        "llm_model",
        "llm_weight",
        "tokenizer_file",
        "base_dir",
        "llm_config",
        "embedding_file",
        "is_mrope",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    which=st.sampled_from(["llm_config.json", "config.json", "runtime_config.json"]),
    content=st.one_of(
        st.dictionaries(bundle_keys, json_values, max_size=8),
        json_values,
        st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
    ),
)
def test_arbitrary_config_content_raises_only_file_errors(
    which: str, content: Any, fixture_bundle: Fixture, tmp_path_factory: pytest.TempPathFactory
) -> None:
    pack = tmp_path_factory.mktemp("fuzz") / "pack"
    shutil.copytree(fixture_bundle("qwen3-draft-noisy"), pack)
    path = pack / which
    if isinstance(content, dict) and which != "runtime_config.json":
        base = json.loads(path.read_text())
        base.update(content)
        content = base
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with contextlib.suppress(FileError):
        read_bundle(pack)
