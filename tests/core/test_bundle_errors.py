"""Every kind of broken bundle gets its own typed error naming the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra import errors
from app.core.pack.bundle import read_bundle

Copy = Callable[..., Path]


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data, indent=2))


def _expect(error: type[errors.FileError], folder: Path, file: str, words: str) -> None:
    with pytest.raises(error) as caught:
        read_bundle(folder)
    assert caught.value.path == folder / file if file else caught.value.path == folder
    assert words in caught.value.problem
    assert str(caught.value.path) in str(caught.value)


def test_missing_folder(tmp_path: Path) -> None:
    _expect(errors.NotABundleError, tmp_path / "nope", "", "not found")


def test_folder_without_bundle(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("hello")
    _expect(errors.NotABundleError, tmp_path, "", "no config.json")


@pytest.mark.parametrize(
    ("name", "what"), [("llm.mnn", "model graph"), ("llm.mnn.weight", "weight file")]
)
def test_missing_or_empty_model_file(bundle_copy: Copy, name: str, what: str) -> None:
    pack = bundle_copy()
    (pack / name).write_bytes(b"")
    _expect(errors.EmptyFileError, pack, name, f"{what} is empty")
    (pack / name).unlink()
    _expect(errors.MissingFileError, pack, name, f"{what} is missing")


def test_invalid_config_json_reports_line_and_column(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    (pack / "config.json").write_text('{\n  "backend_type": "cpu",\n  "thread_num": 4,,\n}\n')
    with pytest.raises(errors.InvalidJsonError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "config.json"
    assert (caught.value.line, caught.value.column) == (3, 19)
    assert "line 3, column 19" in str(caught.value)


def test_invalid_llm_config_json(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    (pack / "llm_config.json").write_text('{"hidden_size": 128')
    _expect(errors.InvalidJsonError, pack, "llm_config.json", "line 1")


def test_config_that_is_not_an_object(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    (pack / "config.json").write_text("[1, 2]")
    _expect(errors.InvalidJsonError, pack, "config.json", "expected an object")


def test_empty_config(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    (pack / "config.json").write_text("")
    _expect(errors.EmptyFileError, pack, "config.json", "empty")


def test_tie_embeddings_beyond_weight_file(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    tie = json.loads((pack / "llm_config.json").read_text())["tie_embeddings"]
    size = (pack / "llm.mnn.weight").stat().st_size
    tie[1] = tie[1] + size  # alpha block now starts past the end of the file
    _edit_json(pack / "llm_config.json", tie_embeddings=tie)
    # Short file or wrong layout read the same; a short file is the likely one.
    _expect(errors.TieEmbeddingsError, pack, "llm.mnn.weight", "shorter than the model needs")


def test_truncated_weight_file_is_named_in_plain_words(
    bundle_copy: Copy, caplog: pytest.LogCaptureFixture
) -> None:
    pack = bundle_copy()
    weight = pack / "llm.mnn.weight"
    _, alpha_off, alpha_size, _, _ = json.loads((pack / "llm_config.json").read_text())[
        "tie_embeddings"
    ]
    needed = alpha_off + alpha_size
    cut = weight.stat().st_size * 8 // 10
    with weight.open("r+b") as handle:
        handle.truncate(cut)
    caplog.set_level("INFO", logger="draftdeck.pack")
    _expect(errors.TieEmbeddingsError, pack, "llm.mnn.weight", "llm.mnn.weight is shorter")
    problem = _problem(pack)
    assert f"({needed:,} bytes needed, {cut:,} present)" in problem
    assert problem.endswith("the download or copy was cut off; download or copy the pack again")
    assert "tie_embeddings" not in problem and "llm_config.json" not in problem
    # The technical detail goes to the log, for whoever reads it.
    assert "tie_embeddings" in caplog.text and f"reaches byte {needed}" in caplog.text


def _problem(folder: Path) -> str:
    with pytest.raises(errors.FileError) as caught:
        read_bundle(folder)
    return caught.value.problem


def test_tie_embeddings_not_whole_rows(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    tie = json.loads((pack / "llm_config.json").read_text())["tie_embeddings"]
    tie[1] -= 1
    _edit_json(pack / "llm_config.json", tie_embeddings=tie)
    _expect(errors.TieEmbeddingsError, pack, "llm_config.json", "does not divide")


def test_tie_embeddings_wrong_shape(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    _edit_json(pack / "llm_config.json", tie_embeddings=[1, 2, "x"])
    _expect(errors.TieEmbeddingsError, pack, "llm_config.json", "five or six whole numbers")


def test_missing_tokenizer(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    for name in ("tokenizer.mtok", "tokenizer.txt"):
        (pack / name).unlink(missing_ok=True)
    _edit_json(pack / "config.json", tokenizer_file=None)
    _expect(errors.MissingFileError, pack, "tokenizer.txt", "tokenizer file not found")


def test_named_tokenizer_missing(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    _edit_json(pack / "config.json", tokenizer_file="tok.bin")
    _expect(errors.MissingFileError, pack, "tok.bin", "tokenizer file not found")


def test_tokenizer_with_bad_header(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    info = read_bundle(pack)
    (pack / info.tokenizer.file).write_bytes(b"999 4\n1 0 0\n5\n")
    _expect(errors.TokenizerError, pack, info.tokenizer.file, "not an MNN tokenizer")


def test_tokenizer_with_short_id_list(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    info = read_bundle(pack)
    (pack / info.tokenizer.file).write_bytes(b"430 4\n3 1 0\n5 6\n")
    _expect(errors.TokenizerError, pack, info.tokenizer.file, "promises 4")


@pytest.mark.parametrize("value", ["../elsewhere/llm.mnn", "/etc/passwd", "sub/../../x.mnn"])
def test_config_pointing_outside_the_folder(bundle_copy: Copy, value: str) -> None:
    pack = bundle_copy()
    _edit_json(pack / "config.json", llm_model=value)
    _expect(errors.OutsideFolderError, pack, "config.json", "outside the pack folder")


def test_base_dir_pointing_away(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    _edit_json(pack / "config.json", base_dir="/tmp/")
    _expect(errors.OutsideFolderError, pack, "config.json", "base_dir")


def test_symlink_escaping_the_folder(bundle_copy: Copy, tmp_path: Path) -> None:
    pack = bundle_copy()
    outside = tmp_path / "outside.mnn"
    outside.write_bytes(b"x")
    (pack / "link.mnn").symlink_to(outside)
    _edit_json(pack / "config.json", llm_model="link.mnn")
    _expect(errors.OutsideFolderError, pack, "config.json", "outside the pack folder")


def test_bad_model_facts(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    _edit_json(pack / "llm_config.json", hidden_size="big")
    _expect(errors.BadValueError, pack, "llm_config.json", "hidden_size")


def test_model_type_not_a_name(bundle_copy: Copy) -> None:
    """Absent, it is inferred (test_export_formats.py); present, it must be a name."""
    pack = bundle_copy()
    _edit_json(pack / "llm_config.json", model_type=7)
    _expect(errors.BadValueError, pack, "llm_config.json", "model_type must be a name")


def test_unknown_attention_kind(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    _edit_json(pack / "llm_config.json", attention_type="diagonal")
    _expect(errors.BadValueError, pack, "llm_config.json", "attention_type")


def test_broken_recipe_file(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    (pack / "config_cpu.json").write_text('{"thread_num": 2 "x": 1}')
    _expect(errors.InvalidJsonError, pack, "config_cpu.json", "line 1, column 18")


def test_each_defect_has_its_own_code() -> None:
    classes = [
        errors.NotABundleError,
        errors.MissingFileError,
        errors.EmptyFileError,
        errors.UnreadableFileError,
        errors.InvalidJsonError,
        errors.BadValueError,
        errors.OutsideFolderError,
        errors.TieEmbeddingsError,
        errors.TokenizerError,
        errors.NotAGraphError,
        errors.NeedsNewerMnnError,
    ]
    assert len({c.code for c in classes}) == len(classes)


def test_file_names_in_llm_config_are_checked_too(bundle_copy: Copy) -> None:
    # Found by the fuzz test: a list where a file name belongs, in llm_config.json.
    pack = bundle_copy()
    llm_config = json.loads((pack / "llm_config.json").read_text())
    llm_config["embedding_file"] = [None, {"x": 1}]
    (pack / "llm_config.json").write_text(json.dumps(llm_config))
    _expect(errors.BadValueError, pack, "llm_config.json", "embedding_file must be a file name")
    llm_config["embedding_file"] = "../../outside.bin"
    (pack / "llm_config.json").write_text(json.dumps(llm_config))
    _expect(errors.OutsideFolderError, pack, "llm_config.json", "points outside the pack")
