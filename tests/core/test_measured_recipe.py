"""The draft recipe measure-pack writes (command line and window alike): the settings the
draft was measured with go into a recipe DraftDeck wrote (the export's, named in its
mark) with the recipe's other keys kept; a recipe DraftDeck did not write is kept
unless forced; a recipe that already says what was measured is not touched at all."""

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
from tests.helpers.tune_results import fast_target_measurement

Copy = Callable[..., Path]
# What setting_result's best setting ran with: one draft thread, precision low, memory
# normal; greedy, as every bench decodes.
MEASURED = {
    "backend_type": "cpu",
    "thread_num": 1,
    "precision": "low",
    "memory": "normal",
    "sampler_type": "greedy",
}


def _measure(draft: Path, force: bool = False) -> Written:
    measured = fast_target_measurement(draft)
    done, _config = finish_pack(draft, [measured], CardFacts(), force)
    return done


def _recipe(draft: Path, recipe: dict[str, Any], name: str = "config_cpu.json") -> bytes:
    (draft / name).write_text(json.dumps(recipe, indent=4))
    return (draft / name).read_bytes()


def _mark_as_exported(draft: Path) -> None:
    files = sorted(p.name for p in draft.iterdir())
    (draft / EXPORT_MARK).write_text(json.dumps({"files": files}))


@pytest.fixture
def draft(bundle_copy: Copy) -> Path:
    return bundle_copy("fast-draft")


def test_the_exports_recipe_gets_the_measured_settings_and_keeps_its_own(draft: Path) -> None:
    # The export's recipe left memory to config.json and carries a key of its own.
    before = _recipe(draft, {"thread_num": 1, "precision": "low", "dynamic_option": 2})
    _mark_as_exported(draft)
    done = _measure(draft)
    recipe = json.loads((draft / "config_cpu.json").read_text())
    assert recipe == {**MEASURED, "dynamic_option": 2}
    assert list(recipe)[:3] == ["thread_num", "precision", "dynamic_option"]  # its order
    # Saved as the Recipes page saves: the version before is the .bak.
    assert (draft / "config_cpu.json.bak").read_bytes() == before
    assert draft / "config_cpu.json" in done.files and done.kept == []
    assert done.backups == [draft / "config_cpu.json.bak"]


def test_a_recipe_draftdeck_did_not_write_is_kept_unless_forced(draft: Path) -> None:
    theirs = _recipe(draft, {"thread_num": 1, "precision": "low"})  # no export mark
    done = _measure(draft)
    assert (draft / "config_cpu.json").read_bytes() == theirs
    assert done.kept == [draft / "config_cpu.json"]
    assert draft / "config_cpu.json" not in done.files
    done = _measure(draft, force=True)
    assert json.loads((draft / "config_cpu.json").read_text()) == MEASURED
    assert (draft / "config_cpu.json.bak").read_bytes() == theirs
    assert draft / "config_cpu.json.bak" in done.backups and done.kept == []


def test_a_recipe_that_says_what_was_measured_is_not_touched(draft: Path) -> None:
    # A Make Pack draft's recipe names every key: a bench measures it as it is, so
    # measuring finds nothing to change in it.
    ours = _recipe(draft, {**MEASURED, "power": "high"})
    _mark_as_exported(draft)
    done = _measure(draft)
    assert (draft / "config_cpu.json").read_bytes() == ours
    assert draft / "config_cpu.json" not in done.files and done.kept == []


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
        assert json.loads((draft / name).read_text()) == MEASURED
    assert done.backups == [draft / "config_cpu.json.bak", draft / "draft_config_cpu.json.bak"]
    assert (draft / "draft_config_cpu.json.bak").read_bytes() == twin


def test_a_pack_without_a_draft_recipe_gets_the_measured_one(draft: Path) -> None:
    (draft / "config_cpu.json").unlink()
    done = _measure(draft)
    assert json.loads((draft / "config_cpu.json").read_text()) == MEASURED
    assert draft / "config_cpu.json" in done.files
