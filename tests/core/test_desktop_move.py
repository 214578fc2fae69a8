"""Move to this computer: the desktop values an earlier DraftDeck wrote into a pack's
recipes go to this computer's settings, the recipes get what the pack shipped, and what
runs here stays the same (core, and `draftdeck recipe move-to-computer`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.errors import FileError
from app.core.recipe.desktop_move import Move, move_to_computer, pack_moves, undo_move
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop, update_desktop
from app.core.recipe.files import RecipeDocument, run_recipes
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
PHONE_DRAFT = {"backend_type": "cpu", "thread_num": 2, "power": "high", "memory": "low"}
PHONE_TARGET = {"backend_type": "opencl", "thread_num": 68, "draft_predict_length": 3}


def _shipped(bundle_copy: Copy) -> tuple[Path, Path]:
    """A pair as a TokForge phone recipe ships it (no DraftDeck save yet)."""
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    config = json.loads((target / "config.json").read_text())
    config.update(PHONE_TARGET)
    (target / "config.json").write_text(json.dumps(config, indent=4) + "\n")
    (draft / "config_cpu.json").write_text(json.dumps(PHONE_DRAFT, indent=4) + "\n")
    return target, draft


def _edit(recipe: Path, **keys: object) -> None:
    """As Tune's Apply and the desktop preset once did: saved into the recipe."""
    doc = RecipeDocument.load(recipe)
    doc.save({**doc.data, **keys})


def test_desktop_values_leave_the_recipes_and_what_runs_here_stays(bundle_copy: Copy) -> None:
    target, draft = _shipped(bundle_copy)
    shipped_target = (target / "config.json").read_bytes()
    shipped_draft = (draft / "config_cpu.json").read_bytes()
    _edit(target / "config.json", backend_type="cpu", thread_num=1, memory="normal")
    _edit(draft / "config_cpu.json", thread_num=1, memory="normal", draft_predict_length=3)
    running = run_recipes(target, draft)

    planned = pack_moves(target).all
    assert planned == [
        Move("config.json", "backend_type", "cpu", "opencl"),
        Move("config.json", "thread_num", 1, 68),
        Move("config.json", "memory", "normal", "low"),  # the pack ships memory low
    ]
    assert planned[1].text() == (
        "config.json thread_num: 1 → this computer; the phone's recipe gets back 68 "
        "(as the pack shipped it)"
    )
    found, snapshot = move_to_computer(target)
    assert found.all == planned
    move_to_computer(draft)
    # The recipes are the phone's again, byte for byte; this computer keeps its values.
    assert (target / "config.json").read_bytes() == shipped_target
    assert json.loads((draft / "config_cpu.json").read_text()) == {
        **PHONE_DRAFT,
        "draft_predict_length": 3,  # not a desktop key: the recipe keeps it
    }
    assert read_desktop(target).of("config.json") == {
        "backend_type": "cpu",
        "thread_num": 1,
        "memory": "normal",
    }
    assert read_desktop(draft).of("config_cpu.json") == {"thread_num": 1, "memory": "normal"}
    assert run_recipes(target, draft) == running
    assert pack_moves(target).all == [] and pack_moves(draft).all == []
    undo_move(snapshot)
    assert json.loads((target / "config.json").read_text())["thread_num"] == 1
    assert not (target / THIS_COMPUTER_FILE).exists()
    assert shipped_draft != (draft / "config_cpu.json").read_bytes()  # the draft stays moved


def test_memory_normal_is_a_desktop_value_even_as_shipped(bundle_copy: Copy) -> None:
    draft = bundle_copy("fast-draft")
    (draft / "config_cpu.json").write_text(json.dumps({"thread_num": 2, "memory": "normal"}))
    found, _ = move_to_computer(draft)
    assert found.all == [Move("config_cpu.json", "memory", "normal", None)]
    assert found.all[0].text() == (
        "config_cpu.json memory: normal → this computer; the key goes from the phone's "
        "recipe (the pack shipped none)"
    )
    assert json.loads((draft / "config_cpu.json").read_text()) == {"thread_num": 2}
    assert read_desktop(draft).of("config_cpu.json") == {"memory": "normal"}


def test_this_computer_s_own_value_is_kept(bundle_copy: Copy) -> None:
    target, _ = _shipped(bundle_copy)
    _edit(target / "config.json", thread_num=1)
    update_desktop(target, "config.json", {"thread_num": 2})
    found, _ = move_to_computer(target)
    assert found.all == [Move("config.json", "thread_num", 1, 68, kept_here=True)]
    assert read_desktop(target).of("config.json") == {"thread_num": 2}
    assert json.loads((target / "config.json").read_text())["thread_num"] == 68


def test_a_broken_settings_file_moves_nothing(bundle_copy: Copy) -> None:
    target, _ = _shipped(bundle_copy)
    _edit(target / "config.json", thread_num=1)
    (target / THIS_COMPUTER_FILE).write_text("{")
    before = (target / "config.json").read_bytes()
    with pytest.raises(FileError, match=r"\.draftdeck-this-computer\.json"):
        move_to_computer(target)
    assert (target / "config.json").read_bytes() == before


def test_the_command_line_moves_shows_and_sets(bundle_copy: Copy) -> None:
    target, _ = _shipped(bundle_copy)
    _edit(target / "config.json", thread_num=1, memory="normal")
    listed = run_cli("recipe", "move-to-computer", str(target), "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["moved"] == [
        {"file": "config.json", "key": "thread_num", "value": 1, "shipped": 68, "kept_here": False},
        {
            "file": "config.json",
            "key": "memory",
            "value": "normal",
            "shipped": "low",
            "kept_here": False,
        },
    ]
    again = run_cli("recipe", "move-to-computer", str(target))
    assert again.returncode == 0 and "no desktop values in its recipes" in again.stdout
    shown = run_cli("recipe", "show", str(target))
    assert "On this computer (" in shown.stdout
    assert "config.json: thread_num = 1" in shown.stdout
    assert json.loads(run_cli("recipe", "show", str(target), "--json").stdout)["this_computer"][
        "values"
    ] == {"version": 1, "config.json": {"thread_num": 1, "memory": "normal"}}
    # Set for this computer only: the phone's recipe untouched; a bad value refused.
    before = (target / "config.json").read_bytes()
    done = run_cli(
        "recipe", "set", str(target), "--target-config", "--this-computer", "thread_num=2"
    )
    assert done.returncode == 0, done.stderr
    assert read_desktop(target).of("config.json")["thread_num"] == 2
    bad = run_cli("recipe", "set", str(target), "--this-computer", "power=high")
    assert bad.returncode == 1 and "'power': not a setting of this computer" in bad.stderr
    assert (target / "config.json").read_bytes() == before
