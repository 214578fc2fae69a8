"""What `draftdeck export` refuses before anything runs: a quant_block that does not divide
the model's widths, an eos that would stop the pack on the wrong token, an output folder
DraftDeck did not make. No export environment needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.hub.hub_api import HubConfig
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.card import CARD_MARK
from app.core.packmaking.export_checks import (
    BITS,
    ExportRefused,
    ExportSettings,
    check_out_folder,
    plan_export,
    read_source,
)
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.export_run import source_folder
from tests.helpers.export_env import HF_FIXTURES
from tests.hub_server import FakeHub

LLAMA = HF_FIXTURES / "llama-tiny"


def _copy(tmp_path: Path, **tokenizer_config: object) -> Path:
    folder = tmp_path / "hf"
    shutil.copytree(LLAMA, folder)
    path = folder / "tokenizer_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **tokenizer_config}))
    return folder


def test_a_block_wider_than_the_hidden_size_is_refused_naming_the_block_that_fits(
    tmp_path: Path,
) -> None:
    with pytest.raises(ExportRefused) as refused:
        plan_export(LLAMA, tmp_path / "out", ExportSettings(block=128))
    message = refused.value.message
    assert str(LLAMA / "config.json") in message
    assert "quant_block 128" in message and "hidden size 64" in message
    assert "Use block 64." in message and "--block" not in message  # the window has no flags
    assert refused.value.code == "bad_block" and refused.value.block == 64
    assert not (tmp_path / "out").exists()


def test_the_smollm2_shape_gets_block_64_with_adjust(tmp_path: Path) -> None:
    # SmolLM2-135M: hidden 576 = 9 x 64, so block 128 exports garbage (DESIGN.md).
    folder = _copy(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_size=576, intermediate_size=1536, num_attention_heads=9, head_dim=64)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ExportRefused, match="does not divide the hidden size 576"):
        plan_export(folder, tmp_path / "out", ExportSettings(block=128))
    plan = plan_export(folder, tmp_path / "out", ExportSettings(block=128), adjust=True)
    assert plan.settings.block == 64
    assert len(plan.adjusted) == 1 and "with block 64 instead" in plan.adjusted[0]
    # A block that fits, and one block per row, are taken as asked.
    assert plan_export(folder, tmp_path / "o", ExportSettings(block=32)).settings.block == 32
    assert plan_export(folder, tmp_path / "o", ExportSettings(block=0)).adjusted == ()


@pytest.mark.parametrize(
    ("eos", "why"),
    [
        ("<|im_start|>", "starts text"),  # the GGUF-converted folder of the issue
        ("<|begin_of_text|>", "starts text"),  # its own bos
        ("hello", "not one of the tokenizer's special tokens"),
        (None, "no eos_token"),
    ],
)
def test_an_eos_that_would_stop_the_pack_on_the_wrong_token_is_refused(
    tmp_path: Path, eos: str | None, why: str
) -> None:
    folder = _copy(tmp_path, eos_token=eos)
    with pytest.raises(ExportRefused, match=why) as refused:
        plan_export(folder, tmp_path / "out", ExportSettings(block=64))
    assert str(folder / "tokenizer_config.json") in refused.value.message
    assert refused.value.code == "bad_eos"


def test_an_eos_that_is_also_the_bos_is_accepted(tmp_path: Path) -> None:
    # GPT-2-style tokenizers (SmolLM2 base, Pythia, StarCoder) end and start text with
    # the same <|endoftext|>; here the fixture's <|end_of_text|> plays it.
    folder = _copy(tmp_path, eos_token="<|end_of_text|>", bos_token="<|end_of_text|>")
    assert read_source(folder).eos_token == "<|end_of_text|>"
    # A start token stays refused even when it is the bos as well.
    folder = _copy(tmp_path / "b", eos_token="<|im_start|>", bos_token="<|im_start|>")
    with pytest.raises(ExportRefused, match="starts text"):
        read_source(folder)


def test_only_the_bits_the_exporter_writes_are_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # llmexport 0.0.5's converter asserts quant_bit in (1, 2, 4, 8).
    assert BITS == (2, 4, 8)
    for bits in BITS:
        assert plan_export(LLAMA, tmp_path / "out", ExportSettings(bits, 64)).settings.bits == bits
    with pytest.raises(ExportRefused, match="--bits 3: the exporter writes 2, 4 or 8 bits"):
        plan_export(LLAMA, tmp_path / "out", ExportSettings(3, 64))
    with pytest.raises(SystemExit) as exited:
        main(["export", str(LLAMA), "--out", str(tmp_path / "out"), "--bits", "6"])
    assert exited.value.code == 2
    assert "invalid choice: 6 (choose from 2, 4, 8)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_fixture_folders_eos_is_accepted() -> None:
    assert read_source(LLAMA).eos_token == "<|eot_id|>"
    assert read_source(LLAMA).architecture == "LlamaForCausalLM"


def test_only_an_empty_folder_or_an_earlier_exports_own_files_may_be_the_output(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    check_out_folder(out)  # new
    out.mkdir()
    check_out_folder(out)  # empty
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ExportRefused, match="DraftDeck did not make it"):
        check_out_folder(out)
    (out / "notes.txt").unlink()
    (out / "llm.mnn").write_bytes(b"x")
    (out / EXPORT_MARK).write_text(json.dumps({"files": ["llm.mnn"]}))
    check_out_folder(out)  # an earlier export: replaced
    # What Make Pack writes after the export: its verification and DraftDeck's card.
    (out / EXPORT_CHECK).write_text("{}")
    (out / "README.md").write_text(f"---\nlibrary_name: mnn\n---\n{CARD_MARK} -->\n# pack\n")
    check_out_folder(out)
    (out / "README.md").write_text("a card written since")
    with pytest.raises(ExportRefused, match=r"did not make \(README.md\)"):
        check_out_folder(out)
    with pytest.raises(ExportRefused, match="not a folder"):
        check_out_folder(out / "README.md")


def test_the_command_exits_2_with_the_refusal_and_makes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pack"
    # A block the user chose is refused; without --block the command fits it to the model.
    assert main(["export", str(LLAMA), "--out", str(out), "--block", "128"]) == 2
    err = capsys.readouterr().err
    assert "quant_block 128 does not divide the hidden size 64" in err and "--block 64" in err
    assert not out.exists()
    assert main(["export", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "neither an HF model folder nor a Hub repo id" in capsys.readouterr().err


def test_a_hub_repo_id_is_downloaded_into_the_hf_cache_first(tmp_path: Path) -> None:
    with FakeHub() as hub:
        hub.add_folder("someone/llama-tiny", LLAMA)
        config = HubConfig(endpoint=hub.endpoint, token=False)
        folder = source_folder("someone/llama-tiny", config, cache_dir=tmp_path / "hf-cache")
    assert folder.is_relative_to(tmp_path / "hf-cache")
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (folder / name).read_bytes() == (LLAMA / name).read_bytes()
    assert read_source(folder).hidden_size == 64
