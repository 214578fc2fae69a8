"""The draft recipe measure-pack writes (command line and window alike): it is the
phone's, so only what carries over (the sampler measured, greedy) goes into a recipe
DraftDeck wrote (the export's, named in its mark) with the recipe's other keys kept; a
recipe DraftDeck did not write is kept unless forced; a recipe that already says it is
not touched at all. The thread count, precision and memory measured on this computer go
to this computer's settings for the pack, where the recipe does not say them already,
so DraftDeck runs the pack as measured (read back through run_recipes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.packmaking.card import CardFacts
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.make import finish_pack
from app.core.packmaking.writing import Written
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.core.recipe.files import run_recipes
from tests.helpers.tune_results import fast_target_measurement

Copy = Callable[..., Path]
# What setting_result's best setting ran with: one draft thread, precision low, memory
# normal; greedy, as every bench decodes. The sampler carries over to a phone; the rest
# was measured on this computer.
CARRIES_OVER = {"sampler_type": "greedy"}
HERE = {"thread_num": 1, "precision": "low", "memory": "normal"}
# The TokForge phone recipe: two draft threads, memory low, power high.
PHONE = {
    "backend_type": "cpu",
    "thread_num": 2,
    "precision": "low",
    "memory": "low",
    "power": "high",
}


def _measure(draft: Path, force: bool = False) -> Written:
    measured = fast_target_measurement(draft)
    done, _config = finish_pack(draft, [measured], CardFacts(), force)
    return done


def _runs_as_measured(draft: Path) -> None:
    """DraftDeck runs the draft here with every setting measured."""
    _target_run, draft_run = run_recipes(draft.parent / "fast-target", draft)
    assert {k: draft_run.get(k) for k in HERE} == HERE


def _recipe(draft: Path, recipe: dict[str, Any], name: str = "config_cpu.json") -> bytes:
    (draft / name).write_text(json.dumps(recipe, indent=4))
    return (draft / name).read_bytes()


def _mark_as_exported(draft: Path) -> None:
    files = sorted(p.name for p in draft.iterdir())
    (draft / EXPORT_MARK).write_text(json.dumps({"files": files}))


@pytest.fixture
def draft(bundle_copy: Copy) -> Path:
    return bundle_copy("fast-draft")


def test_the_exports_recipe_gets_what_carries_over_and_keeps_its_own(draft: Path) -> None:
    # The export's recipe left memory and the sampler to config.json and carries a key of
    # its own.
    before = _recipe(draft, {"thread_num": 1, "precision": "low", "dynamic_option": 2})
    _mark_as_exported(draft)
    done = _measure(draft)
    recipe = json.loads((draft / "config_cpu.json").read_text())
    assert recipe == {"thread_num": 1, "precision": "low", "dynamic_option": 2, **CARRIES_OVER}
    assert list(recipe) == ["thread_num", "precision", "dynamic_option", "sampler_type"]
    # Saved as the Recipes page saves: the version before is the .bak.
    assert (draft / "config_cpu.json.bak").read_bytes() == before
    assert draft / "config_cpu.json" in done.files and done.kept == []
    assert done.backups == [draft / "config_cpu.json.bak"]
    # memory normal was measured here (the recipe left it to config.json's "low"): it is
    # this computer's, and only it, as the recipe says the rest as measured.
    assert read_desktop(draft).of("config_cpu.json") == {"memory": "normal"}
    assert done.values[draft / "config_cpu.json"] == CARRIES_OVER
    assert done.values[draft / THIS_COMPUTER_FILE] == {"memory": "normal"}
    _runs_as_measured(draft)


def test_the_phone_recipe_keeps_its_values_and_draftdeck_runs_it_as_measured(
    draft: Path,
) -> None:
    # The phone's recipe: nothing measured here goes into it, byte for byte; this
    # computer's settings hold what was measured, and DraftDeck runs the draft with it.
    phone = _recipe(draft, {**PHONE, **CARRIES_OVER})
    _mark_as_exported(draft)
    done = _measure(draft)
    assert (draft / "config_cpu.json").read_bytes() == phone
    assert read_desktop(draft).of("config_cpu.json") == {"thread_num": 1, "memory": "normal"}
    assert draft / "config_cpu.json" not in done.files
    assert done.files[1:3] == [draft / THIS_COMPUTER_FILE, draft / "README.md"]
    _runs_as_measured(draft)
    # Measuring again finds this computer's settings already as measured: nothing more.
    again = _measure(draft)
    assert draft / THIS_COMPUTER_FILE not in again.files
    assert (draft / "config_cpu.json").read_bytes() == phone


def test_a_recipe_draftdeck_did_not_write_is_kept_unless_forced(draft: Path) -> None:
    theirs = _recipe(draft, {"thread_num": 1, "precision": "low"})  # no export mark
    done = _measure(draft)
    assert (draft / "config_cpu.json").read_bytes() == theirs
    assert done.kept == [draft / "config_cpu.json"]
    assert draft / "config_cpu.json" not in done.files
    # What was measured here goes to DraftDeck's own file all the same.
    assert read_desktop(draft).of("config_cpu.json") == {"memory": "normal"}
    done = _measure(draft, force=True)
    assert json.loads((draft / "config_cpu.json").read_text()) == {
        "thread_num": 1,
        "precision": "low",
        **CARRIES_OVER,
    }
    assert (draft / "config_cpu.json.bak").read_bytes() == theirs
    assert draft / "config_cpu.json.bak" in done.backups and done.kept == []
    _runs_as_measured(draft)


def test_a_recipe_that_says_what_carries_over_is_not_touched(draft: Path) -> None:
    # A Make Pack draft's recipe names the sampler: measuring finds nothing of the
    # phone's to change in it.
    ours = _recipe(draft, {**HERE, **CARRIES_OVER, "power": "high"})
    _mark_as_exported(draft)
    done = _measure(draft)
    assert (draft / "config_cpu.json").read_bytes() == ours
    assert draft / "config_cpu.json" not in done.files and done.kept == []
    assert not (draft / THIS_COMPUTER_FILE).exists()  # it says what ran here too


def test_a_twin_draftdeck_did_not_write_keeps_both_as_they_are(draft: Path) -> None:
    # config_cpu.json is the export's, the draft_config_cpu.json beside it someone
    # else's: writing one alone would make the two differ.
    ours = _recipe(draft, {"thread_num": 1})
    _mark_as_exported(draft)
    twin = _recipe(draft, {"thread_num": 1}, "draft_config_cpu.json")
    done = _measure(draft)
    assert (draft / "config_cpu.json").read_bytes() == ours
    assert (draft / "draft_config_cpu.json").read_bytes() == twin
    assert done.kept == [draft / "config_cpu.json"]
    done = _measure(draft, force=True)  # forced: both, in step, each kept as .bak
    for name in ("config_cpu.json", "draft_config_cpu.json"):
        assert json.loads((draft / name).read_text()) == {"thread_num": 1, **CARRIES_OVER}
    assert done.backups == [draft / "config_cpu.json.bak", draft / "draft_config_cpu.json.bak"]
    assert (draft / "draft_config_cpu.json.bak").read_bytes() == twin
    # This computer's settings overlay the recipe the engine runs: config_cpu.json.
    assert read_desktop(draft).of("config_cpu.json") == {"precision": "low", "memory": "normal"}
    _runs_as_measured(draft)


def test_a_pack_without_a_draft_recipe_gets_one_with_what_carries_over(draft: Path) -> None:
    (draft / "config_cpu.json").unlink()
    done = _measure(draft)
    assert json.loads((draft / "config_cpu.json").read_text()) == CARRIES_OVER
    assert draft / "config_cpu.json" in done.files
    _runs_as_measured(draft)


def test_this_computers_settings_that_cannot_be_used_are_said_and_kept(draft: Path) -> None:
    broken = b'{"version": 99}'
    (draft / THIS_COMPUTER_FILE).write_bytes(broken)
    done = _measure(draft)
    assert (draft / THIS_COMPUTER_FILE).read_bytes() == broken
    assert draft / THIS_COMPUTER_FILE not in done.files
    assert len(done.problems) == 1 and "newer DraftDeck" in done.problems[0]
    assert (draft / "README.md").exists()  # the rest is written all the same
