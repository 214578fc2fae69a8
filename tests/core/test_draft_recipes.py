"""A draft pack with config_cpu.json and draft_config_cpu.json: which one runs, saving
both in step, refusing to pick one of two that differ (core and `draftdeck recipe`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core.measure.tune_apply import apply_setting, planned_changes, restore
from app.core.measure.tune_plan import Setting
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.core.recipe.draft_recipes import (
    ALONE,
    DIFFER,
    SAME,
    draft_recipes,
    make_same,
    save_all,
)
from app.core.recipe.drafting_settings import DRAFTING_FILE
from app.core.recipe.files import (
    ChangedOnDiskError,
    RecipeDocument,
    draft_recipe_path,
    draft_run_recipe,
    draft_settings,
)
from app.engine.worker.session import Session

Copy = Callable[..., Path]
USED, ALT = "config_cpu.json", "draft_config_cpu.json"


def _read(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def two_recipes(bundle_copy: Copy, **changes: Any) -> Path:
    """A copy of the noisy draft with draft_config_cpu.json beside its config_cpu.json:
    the same recipe in another spelling (2-space indent, keys reversed), plus `changes`."""
    pack = bundle_copy("qwen3-draft-noisy")
    data = _read(pack / USED)
    twin = {key: data[key] for key in reversed(list(data))} | changes
    (pack / ALT).write_text(json.dumps(twin, indent=2) + "\n", encoding="utf-8")
    return pack


def test_the_engine_runs_config_cpu_json_and_the_other_only_alone(bundle_copy: Copy) -> None:
    pack = two_recipes(bundle_copy, thread_num=3)
    assert draft_recipe_path(pack) == pack / USED
    assert draft_settings(pack)["thread_num"] == 2  # config_cpu.json's, not the twin's
    (pack / USED).unlink()
    assert draft_recipe_path(pack) == pack / ALT
    assert draft_settings(pack)["thread_num"] == 3
    assert draft_recipes(pack).state == ALONE
    (pack / ALT).unlink()
    assert draft_recipe_path(pack) == pack / USED  # neither: a save creates config_cpu.json


def test_a_pack_with_only_draft_config_cpu_json_runs_it(
    bundle_copy: Copy, session: Session
) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-noisy")
    recipe = _read(draft / USED) | {"thread_num": 1, "memory": "normal"}
    (draft / ALT).write_text(json.dumps(recipe), encoding="utf-8")
    (draft / USED).unlink()
    session.load(str(target), str(draft), {"memory": "normal"})
    assert session.draft is not None
    assert session.draft.config["thread_num"] == 1
    assert session.draft.config["memory"] == "normal"


def test_same_recipe_in_another_spelling_is_the_same(bundle_copy: Copy) -> None:
    recipes = draft_recipes(two_recipes(bundle_copy))
    assert recipes.state == SAME and recipes.diff == ""
    assert "holds the same recipe: saving writes both in step" in recipes.rule_text()
    assert recipes.rule_text().startswith(f"DraftDeck runs the draft with {USED}")


def test_cli_set_saves_both_in_step_each_with_its_backup(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = two_recipes(bundle_copy)
    before = {name: (pack / name).read_bytes() for name in (USED, ALT)}
    assert main(["recipe", "set", str(pack), "thread_num=1", "note=mine"]) == 0
    out = capsys.readouterr().out
    assert f"saved {pack / USED}" in out and f"saved {pack / ALT}" in out
    assert _read(pack / USED) == _read(pack / ALT)
    assert _read(pack / USED)["thread_num"] == 1 and _read(pack / ALT)["note"] == "mine"
    assert (pack / ALT).read_text().startswith('{\n  "power"')  # its own spelling kept
    for name, old in before.items():
        assert (pack / f"{name}.bak").read_bytes() == old
        assert (pack / ".draftdeck-original" / name).read_bytes() == old

    assert main(["recipe", "show", str(pack)]) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines()[0] == draft_recipes(pack).rule_text()
    assert "saving writes both in step" in shown
    assert main(["recipe", "show", str(pack), "--json"]) == 0
    two = json.loads(capsys.readouterr().out)["draft_recipes"]
    assert (two["used"], two["other"], two["state"]) == (str(pack / USED), str(pack / ALT), SAME)


def test_cli_refuses_to_pick_one_of_two_that_differ(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = two_recipes(bundle_copy, power="low")
    before = {name: (pack / name).read_bytes() for name in (USED, ALT)}
    assert main(["recipe", "set", str(pack), "thread_num=1"]) == 1
    err = capsys.readouterr().err
    assert f"{USED} (which DraftDeck runs) and {ALT}" in err
    assert f'power: "high" in {USED}, "low" in {ALT}' in err
    assert "--file" in err and "--both" in err and "nothing was saved" in err
    assert {name: (pack / name).read_bytes() for name in (USED, ALT)} == before

    assert main(["recipe", "show", str(pack)]) == 0
    shown = capsys.readouterr().out
    assert f"{ALT} differs from it: power" in shown
    assert '-  "power": "high",' in shown and '+  "power": "low",' in shown
    assert main(["recipe", "show", str(pack), "--json"]) == 0
    two = json.loads(capsys.readouterr().out)["draft_recipes"]
    assert two["state"] == DIFFER
    assert two["differences"] == [
        {"key": "power", "used": "high", "other": "low", "in_used": True, "in_other": True}
    ]
    assert main(["recipe", "validate", str(pack / ALT)]) == 0  # valid on its own
    checked = capsys.readouterr().out
    assert '+  "power": "low",' in checked and "valid (1 warning)" in checked

    # Told which: only that file; told both: the key in each, the rest kept apart.
    assert main(["recipe", "set", str(pack), "thread_num=1", "--file", ALT]) == 0
    assert _read(pack / ALT)["thread_num"] == 1
    assert (pack / USED).read_bytes() == before[USED]
    assert main(["recipe", "set", str(pack), "thread_num=3", "--both"]) == 0
    assert _read(pack / USED)["thread_num"] == _read(pack / ALT)["thread_num"] == 3
    assert (_read(pack / USED)["power"], _read(pack / ALT)["power"]) == ("high", "low")
    assert "differs from it" in capsys.readouterr().err  # still apart, and said so


def test_a_second_save_that_fails_says_which_file_holds_what(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = two_recipes(bundle_copy)
    twin_before = (pack / ALT).read_bytes()
    (pack / f"{ALT}.bak").mkdir()  # the twin's backup cannot be written: its save fails
    assert main(["recipe", "set", str(pack), "thread_num=1"]) == 1
    err = capsys.readouterr().err
    assert f"{pack / ALT}: not saved" in err
    assert f"{USED} holds the new recipe; {ALT} still holds the one before" in err
    assert _read(pack / USED)["thread_num"] == 1
    assert (pack / ALT).read_bytes() == twin_before
    assert draft_recipes(pack).state == DIFFER  # and every later look says so


def test_nothing_is_saved_when_either_file_changed_elsewhere(bundle_copy: Copy) -> None:
    pack = two_recipes(bundle_copy)
    used, twin = RecipeDocument.load(pack / USED), RecipeDocument.load(pack / ALT)
    (pack / ALT).write_text((pack / ALT).read_text().replace("high", "low"), encoding="utf-8")
    used_before = (pack / USED).read_bytes()
    data = used.data | {"thread_num": 1}
    with pytest.raises(ChangedOnDiskError) as caught:
        save_all([(used, data), (twin, data)])
    assert caught.value.path == pack / ALT
    assert (pack / USED).read_bytes() == used_before


def test_make_same_copies_the_chosen_recipe_even_over_a_broken_one(bundle_copy: Copy) -> None:
    pack = two_recipes(bundle_copy, power="low")
    make_same(pack / ALT, pack / USED)
    assert _read(pack / USED) == _read(pack / ALT)
    assert json.loads((pack / f"{USED}.bak").read_text())["power"] == "high"
    (pack / ALT).write_text('{"power": ', encoding="utf-8")
    recipes = draft_recipes(pack)
    assert recipes.state == DIFFER and f"{ALT} cannot be read (invalid JSON" in recipes.summary()
    make_same(pack / USED, pack / ALT)
    assert draft_recipes(pack).state == SAME
    assert (pack / f"{ALT}.bak").read_text() == '{"power": '


def test_tune_leaves_both_recipes_as_they_are_and_adapts_the_one_that_runs(
    bundle_copy: Copy,
) -> None:
    """What Tune measured here goes to this computer's settings over the recipe the
    engine runs (config_cpu.json); both phone recipes stay the same, byte for byte."""
    target, draft = bundle_copy("qwen3-target"), two_recipes(bundle_copy)
    before = (draft / USED).read_bytes(), (draft / ALT).read_bytes()
    setting = Setting(2, 1, "low", "normal", 1)
    changes = planned_changes(setting, target, draft)
    assert {c.path for c in changes} == {
        target / THIS_COMPUTER_FILE,
        draft / THIS_COMPUTER_FILE,
        draft / DRAFTING_FILE,  # the setting drafts fixed lengths; the pack adaptively
    }
    assert {c.recipe for c in changes if c.path == draft / THIS_COMPUTER_FILE} == {USED}
    snapshot = apply_setting(setting, target, draft)
    assert ((draft / USED).read_bytes(), (draft / ALT).read_bytes()) == before
    assert read_desktop(draft).of(USED)["memory"] == "normal"
    assert draft_run_recipe(draft)["memory"] == "normal"
    restore(snapshot)
    assert not (draft / THIS_COMPUTER_FILE).exists()
    assert draft_run_recipe(draft)["memory"] == "low"
