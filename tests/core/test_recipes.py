"""Recipe files and schema: round trips, validation, change detection, crash safety, CLI."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.infra.errors import InvalidJsonError
from app.core.pack.bundle import read_bundle
from app.core.recipe.files import (
    ChangedOnDiskError,
    InvalidRecipeError,
    RecipeDocument,
    draft_run_recipe,
    draft_settings,
    original_path,
    original_text,
    parse_value,
    read_recipe,
    reset_to_original,
    run_recipes,
)
from app.core.recipe.presets import builtin_presets, pack_preset, presets_for
from app.core.recipe.schema import DRAFT, ERROR, FIELDS, TARGET, WARNING, host_warnings, validate
from app.engine.worker.session import Session
from tests.helpers.paths import FIXTURES, HELPERS, ROOT

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
ALL_RECIPES = [
    (name, file)
    for name in ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-draft")
    for file in ("config.json", "config_cpu.json")
    if (FIXTURES / name / file).is_file()
]


@pytest.mark.parametrize(("name", "file"), ALL_RECIPES)
def test_unchanged_recipe_round_trips_byte_for_byte(
    name: str, file: str, bundle_copy: Copy
) -> None:
    pack = bundle_copy(name)
    path = pack / file
    before = path.read_bytes()
    doc = RecipeDocument.load(path)
    assert doc.render(dict(doc.data)) == before.decode()
    doc.save(dict(doc.data))
    assert path.read_bytes() == before
    assert (pack / (file + ".bak")).read_bytes() == before


@pytest.mark.parametrize("indent", [2, 4, "\t"])
def test_edit_keeps_order_indent_and_unknown_keys(tmp_path: Path, indent: int | str) -> None:
    path = tmp_path / "config_cpu.json"
    original = {
        "zeta_unknown": {"nested": [1, 2]},
        "thread_num": 2,
        "memory": "low",
        "alpha_unknown": "keep me",
    }
    path.write_text(json.dumps(original, indent=indent) + "\n")
    doc = RecipeDocument.load(path)
    data = dict(doc.data)
    data["thread_num"] = 3
    data["power"] = "high"
    doc.save(data)
    text = path.read_text()
    assert json.loads(text) == {**original, "thread_num": 3, "power": "high"}
    assert list(json.loads(text)) == [
        "zeta_unknown",
        "thread_num",
        "memory",
        "alpha_unknown",
        "power",
    ]
    assert text == json.dumps(json.loads(text), indent=indent) + "\n"


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "config_cpu.json"
    path.write_text('{\n  "thread_num": 2\n  "memory": "low"\n}\n')
    with pytest.raises(InvalidJsonError) as caught:
        RecipeDocument.load(path)
    assert (caught.value.line, caught.value.column) == (3, 3)


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("backend_type", "gpu", "not one of"),
        ("backend_type", 3, "must be text"),
        ("thread_num", 0, "at least 1"),
        ("thread_num", 2.5, "whole number"),
        ("thread_num", "2", "whole number"),
        ("thread_num", True, "whole number"),
        ("precision", "ultra", "not one of"),
        ("memory", None, "must be text"),
        ("power", "max", "not one of"),
        ("sampler_type", "beam", "not one of"),
        ("draft_predict_length", 0, "at least 1"),
        ("draft_predict_length", 17, "at most 16"),
        ("temperature", -1, "at least 0"),
        ("temperature", "hot", "must be a number"),
        ("top_p", 1.5, "at most 1"),
        ("reuse_kv", "yes", "true or false"),
        ("draft_config_path", 5, "must be text"),
        ("speculative_type", "medusa", "not one of"),
    ],
)
def test_each_validation_rule(key: str, value: object, words: str) -> None:
    problems = validate({key: value}, TARGET)
    assert len(problems) == 1
    assert problems[0].key == key and problems[0].severity == ERROR
    assert words in problems[0].message


def test_every_problem_at_once_and_unknown_keys_pass() -> None:
    problems = validate(
        {"thread_num": 0, "memory": "x", "precision": "y", "my_key": object()}, DRAFT
    )
    assert sorted(p.key or "" for p in problems) == ["memory", "precision", "thread_num"]


def test_target_only_key_in_draft_recipe_warns() -> None:
    (problem,) = validate({"draft_predict_length": 3}, DRAFT)
    assert problem.severity == WARNING and "target" in problem.message


def test_defaults_are_mnn_code_defaults() -> None:
    assert FIELDS["draft_predict_length"].default == 3
    assert "4" in FIELDS["draft_predict_length"].docs_note
    assert FIELDS["thread_num"].default == 4
    assert FIELDS["memory"].default == "low" and "lossless" in FIELDS["memory"].help
    assert "efficiency cores" in FIELDS["thread_num"].help
    for field in FIELDS.values():
        assert field.help.endswith(".")
        if field.default != "":
            assert not validate({field.key: field.default}, field.scopes[0])


def test_sampler_texts_no_longer_say_decoding_is_greedy_only() -> None:
    sampler_type = FIELDS["sampler_type"].help
    assert "Chat samples" in sampler_type and "--sample" in sampler_type
    assert "whatever this says" not in sampler_type and "is greedy:" not in sampler_type
    for key in ("temperature", "top_k", "top_p", "min_p", "typical"):
        assert "ignored by greedy" in FIELDS[key].help
    # The keys the sampler reads, with the defaults of sampler_settings' docstring.
    assert FIELDS["min_p"].default == 0.1 and "0.05" in FIELDS["min_p"].docs_note
    assert FIELDS["typical"].default == 1.0 and "0.95" in FIELDS["typical"].docs_note
    assert FIELDS["presence_penalty"].default == 0.0
    assert "min_p" in FIELDS["sampler_type"].choices
    assert not validate({"mixed_samplers": ["topK", "temperature"]}, TARGET)


def test_host_warnings(tmp_path: Path) -> None:
    (tmp_path / "here.json").write_text("{}")
    warnings = host_warnings(
        {"backend_type": "opencl", "thread_num": 8, "draft_config_path": "missing.json"},
        tmp_path,
        physical_cores=2,
    )
    by_key = {w.key: w.message for w in warnings}
    # The phone's backend, kept for the phone; the user is pointed to this computer's.
    assert "DraftDeck runs it on the cpu here" in by_key["backend_type"]
    assert "Keep opencl for the phone" in by_key["backend_type"]
    assert "under On this computer" in by_key["backend_type"]
    assert "draft_config_path" in by_key and "missing.json" in by_key["draft_config_path"]
    # opencl's thread_num is not a thread count.
    assert "thread_num" not in by_key
    cpu = host_warnings({"thread_num": 8, "draft_config_path": "here.json"}, tmp_path, 2)
    assert [w.key for w in cpu] == ["thread_num"]
    assert all(w.severity == WARNING for w in warnings + cpu)


def test_change_on_disk_is_detected(bundle_copy: Copy) -> None:
    path = bundle_copy("qwen3-draft-noisy") / "config_cpu.json"
    doc = RecipeDocument.load(path)
    path.write_text(path.read_text().replace('"thread_num": 2', '"thread_num": 6'))
    assert doc.changed_on_disk()
    with pytest.raises(ChangedOnDiskError, match="changed by another program"):
        doc.save({**doc.data, "memory": "normal"})
    assert json.loads(path.read_text())["thread_num"] == 6  # nothing overwritten
    doc.save({**doc.data, "memory": "normal"}, overwrite_changes=True)
    assert json.loads(path.read_text())["memory"] == "normal"
    assert not doc.changed_on_disk()


def test_pack_original_is_kept_and_restored(bundle_copy: Copy) -> None:
    path = bundle_copy("qwen3-draft-noisy") / "config_cpu.json"
    shipped = path.read_bytes()
    doc = RecipeDocument.load(path)
    doc.save({**doc.data, "thread_num": 4})
    doc.save({**doc.data, "thread_num": 8})
    assert original_path(path).read_bytes() == shipped  # the first version, not the last
    assert original_text(path) == shipped.decode()
    assert reset_to_original(path)
    assert path.read_bytes() == shipped


def test_values_from_the_command_line() -> None:
    assert parse_value("2") == 2 and parse_value("true") is True
    assert parse_value("low") == "low" and parse_value('"4"') == "4"
    assert parse_value("[1, 2]") == [1, 2]


def test_presets(fixture_bundle: Fixture) -> None:
    keys = [p.key for p in builtin_presets()]
    assert keys == ["tokforge", "desktop_cpu", "mnn_defaults"]
    tokforge = builtin_presets()[0]
    assert tokforge.target["backend_type"] == "opencl"
    assert tokforge.draft == {
        "backend_type": "cpu",
        "thread_num": 2,
        "precision": "low",
        "memory": "low",
        "sampler_type": "greedy",
        "power": "high",
    }
    for preset in builtin_presets():
        assert not [p for p in validate(dict(preset.target), TARGET) if p.severity == ERROR]
        assert not validate(dict(preset.draft), DRAFT)
    noisy = read_bundle(fixture_bundle("qwen3-draft-noisy"))
    own = pack_preset(noisy)
    assert own is not None
    assert own.target == {"draft_predict_length": 3, "backend_type": "opencl"}
    assert own.draft == {"thread_num": 2, "backend_type": "cpu"}
    assert presets_for(noisy)[0] is own or presets_for(noisy)[0] == own
    assert pack_preset(read_bundle(fixture_bundle("qwen3-draft-identical"))) is None


@pytest.mark.slow
def test_killed_while_saving_leaves_old_or_new(bundle_copy: Copy) -> None:
    """SIGKILL at random moments, 200 times: always valid JSON, one of the two versions."""
    path = bundle_copy("qwen3-draft-noisy") / "config_cpu.json"
    base = json.loads(path.read_text())
    versions = [
        {**base, "thread_num": 1, "padding": ""},
        {**base, "thread_num": 2, "padding": "x" * 1000},
    ]
    rng = random.Random(1234)
    child = [sys.executable, str(HELPERS / "save_forever.py"), str(path)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    saved = 0
    for _ in range(200):
        proc = subprocess.Popen(child, stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.01))
        proc.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
        proc.wait()
        proc.stdout.close()
        data = json.loads(path.read_text())  # never torn
        assert data in versions or data == base
        saved += data in versions
        backup = path.with_name(path.name + ".bak")
        if backup.exists():  # the backup is never torn either
            assert json.loads(backup.read_text()) in [*versions, base]
    assert saved, "no save ever completed: the kills proved nothing"
    # Killed saves leave temporary files; the next save removes them.
    (path.parent / f".{path.name}.planted.tmp").write_text("{")
    RecipeDocument.load(path).save(versions[0])
    assert not list(path.parent.glob(".config_cpu.json.*"))


def test_cli_show_set_validate(bundle_copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    assert main(["recipe", "show", str(pack), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["draft_recipe"]["values"]["thread_num"] == 2
    assert "llm_model" in shown["target_config"]["unknown_keys"]

    assert main(["recipe", "set", str(pack), "thread_num=1", "memory=normal", "note=hello"]) == 0
    recipe = json.loads((pack / "config_cpu.json").read_text())
    assert (recipe["thread_num"], recipe["memory"], recipe["note"]) == (1, "normal", "hello")

    before = (pack / "config.json").read_bytes()
    assert main(["recipe", "set", str(pack), "draft_predict_length=99", "--target-config"]) == 1
    assert (pack / "config.json").read_bytes() == before
    assert "at most 16" in capsys.readouterr().err
    assert main(["recipe", "set", str(pack), "draft_predict_length=2", "--target-config"]) == 0
    assert json.loads((pack / "config.json").read_text())["draft_predict_length"] == 2

    bad = pack / "broken.json"
    bad.write_text('{"thread_num": }')
    assert main(["recipe", "validate", str(bad)]) == 1
    assert "line 1, column 16" in capsys.readouterr().err
    assert main(["recipe", "validate", str(pack / "config_cpu.json")]) == 0


def test_saved_recipe_is_what_the_engine_loads(bundle_copy: Copy, session: Session) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-noisy")
    assert (
        main(
            [
                "recipe",
                "set",
                str(target),
                "draft_predict_length=2",
                "memory=normal",
                "--target-config",
            ]
        )
        == 0
    )
    assert main(["recipe", "set", str(draft), "thread_num=1", "memory=normal"]) == 0
    info = session.load(str(target), str(draft))
    assert info.draft_length == 2
    assert info.lossless_expected is True
    assert session.draft is not None
    assert session.draft.config["thread_num"] == 1


def test_run_recipes_layer_the_files_as_the_engine_does(tmp_path: Path) -> None:
    target, draft = tmp_path / "target", tmp_path / "draft"
    target.mkdir()
    draft.mkdir()
    (target / "config.json").write_text('{"thread_num": 4, "memory": "low", "llm_model": "a"}')
    (draft / "config.json").write_text('{"thread_num": 4, "precision": "low", "power": "high"}')
    (draft / "config_cpu.json").write_text('{"thread_num": 2, "precision": "high"}')
    target_run, draft_run = run_recipes(target, draft, {"memory": "normal"}, {"thread_num": 1})
    # The target: its config.json under the caller's keys.
    assert target_run == {"thread_num": 4, "memory": "normal", "llm_model": "a"}
    # The draft: config.json, under config_cpu.json, under the caller's keys.
    assert draft_run == {"thread_num": 1, "precision": "high", "power": "high"}
    # MNN reads config.json itself: set_config gets only the recipe and the caller's keys.
    assert draft_settings(draft, {"thread_num": 1}) == {"thread_num": 1, "precision": "high"}
    # A recipe being edited stands for the saved config_cpu.json.
    edited = draft_run_recipe(draft, recipe={"memory": "normal"})
    assert edited == {"thread_num": 4, "precision": "low", "power": "high", "memory": "normal"}
    # No draft, and files missing or broken: nothing from them.
    assert run_recipes(target, None)[1] == {}
    (draft / "config_cpu.json").write_text("{not json")
    assert read_recipe(draft / "config_cpu.json") == {}
    assert read_recipe(draft / "missing.json") == {}
    saved_config = {"thread_num": 4, "precision": "low", "power": "high"}
    assert run_recipes(tmp_path / "none", draft) == ({}, saved_config)


def test_run_recipes_are_what_the_engine_loads(bundle_copy: Copy, session: Session) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-noisy")
    target_cfg, draft_cfg = {"memory": "normal"}, {"thread_num": 1}
    session.load(str(target), str(draft), target_cfg, draft_cfg)
    assert session.draft is not None
    target_run, _ = run_recipes(target, draft, target_cfg, draft_cfg)
    assert session.target_recipe == target_run
    # What the draft's MNN instance was handed (plus the fixes every pack gets).
    assert session.draft.config.items() >= draft_settings(draft, draft_cfg).items()


def test_cli_set_refuses_nan_and_validate_reports_it(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    recipe = pack / "config_cpu.json"
    before = recipe.read_bytes()
    for value in ("NaN", "Infinity", "-Infinity", "[1, NaN]"):
        assert main(["recipe", "set", str(pack), f"foo={value}"]) == 1
        assert "NaN and Infinity are not valid JSON" in capsys.readouterr().err
        assert recipe.read_bytes() == before
    recipe.write_text('{"thread_num": 2, "foo": NaN}')
    assert main(["recipe", "validate", str(recipe)]) == 1
    said = capsys.readouterr().err  # the file is refused as it is read, naming where
    assert "config_cpu.json: invalid JSON: line 1, column 26: NaN is not a number" in said
    recipe.write_bytes(before)
    with pytest.raises(InvalidRecipeError, match="NaN"):
        RecipeDocument.load(recipe).save({"foo": float("nan")})
    assert recipe.read_bytes() == before


def test_cli_set_on_a_missing_folder_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-pack"
    assert main(["recipe", "set", str(missing), "thread_num=1"]) == 1
    assert not missing.exists()
    assert str(missing) in capsys.readouterr().err
