"""Pack JSON as MNN reads it: a key given twice, a number beyond 64 bits, a NUL in a
file name, declared sizes the graph and weights do not hold, and a folder removed while
it is read. Each is refused with the file named (or bounded, for the context window),
never a traceback and never a reading MNN would not share."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.infra import errors, jsonfile
from app.core.pack import bundle
from app.core.pack.bundle import read_bundle
from app.core.pack.context_window import BOUND, CONTEXT_BOUND
from app.core.pack.stop_tokens import with_pack_stops
from app.core.recipe.files import RecipeDocument
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]


def _insert_after(path: Path, marker: str, text: str) -> None:
    """`text` right after the first `marker`: keys MNN's reader sees before the others."""
    content = path.read_text(encoding="utf-8")
    assert marker in content, f"{marker!r} not in {path.name}"
    path.write_text(content.replace(marker, marker + text, 1), encoding="utf-8")


def _set_key(path: Path, key: str, literal: str) -> None:
    """`key` at the top of `path` set to the JSON `literal`, written as is."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data[key] = "PLACEHOLDER"
    text = json.dumps(data, indent=4).replace('"PLACEHOLDER"', literal)
    path.write_text(text, encoding="utf-8")


# (bundle, file, where the repeated key goes, the first occurrence, the key as named)
REPEATED = [
    ("qwen3-target", "config.json", "{", '"llm_weight": "../../outside.weight", ', "llm_weight"),
    ("qwen3-target", "llm_config.json", '"jinja": {', '"eos": "<|endoftext|>", ', "jinja.eos"),
    ("qwen3-draft-noisy", "config_cpu.json", "{", '"thread_num": 8, ', "thread_num"),
    (
        "qwen3-draft-noisy",
        "runtime_config.json",
        '"qwen3_4b": {',
        '"enabled": true, ',
        "compatible_targets.qwen3_4b.enabled",
    ),
    ("era-3.4.1-tokforge", "draft_config_cpu.json", "{", '"thread_num": 8, ', "thread_num"),
]
REPEATED_IDS = [f"{file}:{key}" for _, file, _, _, key in REPEATED]


@pytest.mark.parametrize(("name", "file", "marker", "first", "key"), REPEATED, ids=REPEATED_IDS)
def test_a_key_given_twice_is_refused_naming_key_and_file(
    bundle_copy: Copy, name: str, file: str, marker: str, first: str, key: str
) -> None:
    pack = bundle_copy(name)
    _insert_after(pack / file, marker, first)
    with pytest.raises(errors.InvalidJsonError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / file
    assert f"the key {key!r} is given twice" in caught.value.problem


def test_the_recipe_editor_refuses_a_key_given_twice(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    _insert_after(pack / "config_cpu.json", "{", '"thread_num": 8, ')
    with pytest.raises(errors.InvalidJsonError, match="'thread_num' is given twice"):
        RecipeDocument.load(pack / "config_cpu.json")
    with pytest.raises(errors.InvalidJsonError, match="'a' is given twice"):
        RecipeDocument.parse(pack / "config_cpu.json", '{"a": 1, "a": 2}')


def _no_traceback(proc: Any) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr


def test_info_and_check_name_the_repeated_key(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _insert_after(pack / "config.json", "{", '"llm_weight": "../../outside.weight", ')
    info = run_cli("info", str(pack), timeout=120)
    assert info.returncode == 1
    assert str(pack / "config.json") in info.stderr and "'llm_weight' is given twice" in info.stderr
    _no_traceback(info)
    as_json = run_cli("info", "--json", str(pack), timeout=120)
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "invalid_json" and error["file"] == str(pack / "config.json")
    check = run_cli("check", str(pack), str(bundle_copy("qwen3-draft-identical")), timeout=120)
    assert check.returncode == 2
    assert "cannot read the target" in check.stderr
    assert "'llm_weight' is given twice" in check.stderr
    _no_traceback(check)


def test_a_number_of_5000_digits_is_refused_naming_the_file(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _set_key(pack / "llm_config.json", "layer_nums", "1" + "0" * 5000)
    with pytest.raises(errors.InvalidJsonError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "llm_config.json"
    assert "5,001 digits" in caught.value.problem and "beyond any sane size" in caught.value.problem
    info = run_cli("info", str(pack), timeout=120)
    assert info.returncode == 1 and "llm_config.json" in info.stderr
    _no_traceback(info)


def test_max_all_tokens_beyond_64_bits_is_refused(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _set_key(pack / "config.json", "max_all_tokens", "1" + "0" * 30)
    with pytest.raises(errors.InvalidJsonError, match="31 digits") as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "config.json"


def test_a_huge_context_is_bounded_and_says_so(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")  # its llm_config.json gives no trained window
    _set_key(pack / "config.json", "max_all_tokens", str(10**18))
    context = read_bundle(pack).context
    assert context.tokens == CONTEXT_BOUND and context.limited_by == BOUND
    assert context.recipe_limit == 10**18
    assert "DraftDeck's upper bound" in context.describe()
    assert "trained window is unknown" in context.describe()


def test_a_huge_context_is_bounded_by_the_trained_positions(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _set_key(pack / "config.json", "max_all_tokens", str(10**18))
    _set_key(pack / "llm_config.json", "max_position_embeddings", "40960")
    context = read_bundle(pack).context
    assert context.tokens == 40960 and context.limited_by == "model"


def test_a_nul_in_a_file_name_is_refused_naming_the_file(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _set_key(pack / "config.json", "llm_weight", '"llm.mnn.weight\\u0000../../outside"')
    with pytest.raises(errors.BadValueError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "config.json"
    assert "llm_weight" in caught.value.problem and "NUL" in caught.value.problem
    info = run_cli("info", str(pack), timeout=120)
    assert info.returncode == 1 and "config.json" in info.stderr
    _no_traceback(info)


def test_layer_nums_the_graph_does_not_hold_is_refused(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _set_key(pack / "llm_config.json", "layer_nums", str(10**9))
    with pytest.raises(errors.BadValueError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "llm_config.json"
    problem = caught.value.problem
    assert "1,000,000,000" in problem and "llm.mnn holds 2 layers" in problem


def test_a_folder_removed_while_read_is_a_message(
    bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removed after its files were checked and before the weights' size is taken."""
    pack = bundle_copy("qwen3-target")

    def remove_the_pack(*args: Any) -> Any:
        stops = with_pack_stops(*args)
        shutil.rmtree(pack)
        return stops

    monkeypatch.setattr(bundle, "with_pack_stops", remove_the_pack)
    with pytest.raises(errors.MissingFileError) as caught:
        read_bundle(pack)
    assert caught.value.path.is_relative_to(pack)
    assert "disappeared while the pack was read" in caught.value.problem


# NaN, Infinity and -Infinity are not JSON: Python's reader takes them, MNN's refuses.
NOT_FINITE = [
    ("NaN", "NaN is not a number JSON allows"),
    ("Infinity", "Infinity is not a number JSON allows"),
    ("-Infinity", "-Infinity is not a number JSON allows"),
    ("1e400", "the number 1e400 is too large"),
]


@pytest.mark.parametrize(("literal", "said"), NOT_FINITE, ids=[n for n, _ in NOT_FINITE])
def test_nan_and_infinity_are_refused_naming_file_line_and_value(
    bundle_copy: Copy, literal: str, said: str
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    recipe = pack / "config_cpu.json"
    _set_key(recipe, "temperature", literal)
    line = next(
        n for n, text in enumerate(recipe.read_text().splitlines(), 1) if "temperature" in text
    )
    with pytest.raises(errors.InvalidJsonError) as caught:
        read_bundle(pack)
    assert caught.value.path == recipe
    assert said in caught.value.problem
    assert (caught.value.line, caught.value.column) == (line, len('    "temperature": ') + 1)
    with pytest.raises(errors.InvalidJsonError, match=said):  # the Recipes page's reader
        RecipeDocument.load(recipe)


def test_nan_inside_a_string_is_text() -> None:
    """Only the bare constant is refused: the word in a string, or a name, is text; the
    position found is the value's, not the string's."""
    text = '{"note": "NaN or -Infinity", "x": [1, NaN]}'
    assert jsonfile.parse_json('{"note": "NaN or Infinity"}', Path("a.json")) == {
        "note": "NaN or Infinity"
    }
    with pytest.raises(errors.InvalidJsonError) as caught:
        jsonfile.parse_json(text, Path("a.json"))
    assert (caught.value.line, caught.value.column) == (1, text.rindex("NaN") + 1)
    assert "a.json" in str(caught.value)
