"""The tokenizer files of an HF folder are checked before an export (tokenizer_files.py):
a `tokenizer.model` that is a GGUF file (as some conversions leave) or no SentencePiece
model at all, a tokenizer.json without its model, a tokenizer_config.json that is not an
object: each is refused naming the file and what is wrong, by the checks the CLI export
and Make Pack share, instead of ending the export in the exporter's traceback. A real
SentencePiece model passes."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.packmaking.export_checks import ExportRefused, ExportSettings, plan_export
from tests.helpers.export_env import HF_FIXTURES, export_env

SETTINGS = ExportSettings(block=64)  # llama-tiny's hidden size is 64


def _llama(tmp_path: Path) -> Path:
    return Path(shutil.copytree(HF_FIXTURES / "llama-tiny", tmp_path / "llama"))


def _refusal(folder: Path, tmp_path: Path) -> ExportRefused:
    with pytest.raises(ExportRefused) as refused:
        plan_export(folder, tmp_path / "out", SETTINGS)
    assert refused.value.code == "bad_tokenizer"
    return refused.value


def _gguf() -> bytes:
    """The start of a GGUF file: magic, version 3, tensor and key/value counts."""
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + b"\x00" * 200


def test_a_gguf_file_named_tokenizer_model_is_refused_by_name(tmp_path: Path) -> None:
    folder = _llama(tmp_path)
    (folder / "tokenizer.model").write_bytes(_gguf())
    message = _refusal(folder, tmp_path).message
    assert message.startswith(f"{folder / 'tokenizer.model'}: is a GGUF file")
    assert "not a SentencePiece model" in message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "is empty"),
        (b'{"model": {}}', "it starts with byte 0x7b"),
        (b"\n\x7f\n\x05<unk>", "runs past the end of the file"),  # a cut file
        (b"\n\x80", "its first field is cut short"),
        (b"\n\x06\n\x04\xff\xfe\xfd\xfc", "not UTF-8 text"),
        (b"\n\x05\x15\x00\x00\x00\x00", "its first piece has no text"),
    ],
)
def test_a_tokenizer_model_that_is_no_sentencepiece_model_is_refused(
    tmp_path: Path, data: bytes, said: str
) -> None:
    folder = _llama(tmp_path)
    (folder / "tokenizer.model").write_bytes(data)
    message = _refusal(folder, tmp_path).message
    assert str(folder / "tokenizer.model") in message and said in message, message


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("tokenizer.json", "GGUF\x00\x00", "invalid JSON"),
        ("tokenizer.json", '{"version": "1.0", "added_tokens": []}', 'has no "model" object'),
        ("tokenizer.json", '{"model": "BPE"}', 'has no "model" object'),
        ("tokenizer_config.json", '["<|im_end|>"]', "expected an object"),
    ],
)
def test_a_tokenizer_json_file_that_does_not_hold_one_is_refused(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    folder = _llama(tmp_path)
    (folder / name).write_text(text, encoding="utf-8")
    message = _refusal(folder, tmp_path).message
    assert message.startswith(f"{folder / name}: ") and said in message, message


def test_the_cli_export_names_the_wrong_file_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _llama(tmp_path)
    (folder / "tokenizer.model").write_bytes(_gguf())
    out = tmp_path / "pack"
    assert main(["export", str(folder), "--out", str(out), "--block", "64"]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'tokenizer.model'}: is a GGUF file" in err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.slow
def test_a_real_sentencepiece_model_passes(tmp_path: Path) -> None:
    """Trained here by the sentencepiece of the export environment (the app has none)."""
    folder = _llama(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 50, encoding="utf-8")
    train = (
        "import sentencepiece as s, sys; s.SentencePieceTrainer.train(input=sys.argv[1], "
        "model_prefix=sys.argv[2], vocab_size=30, minloglevel=2)"
    )
    prefix = tmp_path / "sp"
    subprocess.run(
        [str(export_env().python), "-c", train, str(corpus), str(prefix)],
        check=True,
        timeout=300,
    )
    shutil.copy(prefix.with_suffix(".model"), folder / "tokenizer.model")
    assert plan_export(folder, tmp_path / "out", SETTINGS).source.folder == folder
