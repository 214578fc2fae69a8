"""DraftDeck's own copies of a recipe (.bak, the pack's original) stay out of a pack
added by reference: that folder is the user's (often a git checkout). Packs DraftDeck
put in its library keep them beside the recipe; old referenced packs that already hold
`.draftdeck-original/` go on using it."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.infra.paths import app_dirs
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.core.recipe.files import (
    RecipeDocument,
    backup_path,
    original_path,
    original_text,
    reset_to_original,
)
from tests.helpers.folder_listing import listing

Copy = Callable[..., Path]
RECIPE = "config_cpu.json"


def referenced(bundle_copy: Copy, tmp_path: Path) -> Path:
    pack = bundle_copy("qwen3-draft-noisy", tmp_path / "checkout" / "qwen3-draft-noisy")
    Library(load_settings(), save_settings).add_folder(pack)
    return pack


def test_saving_a_referenced_pack_writes_only_its_recipe(bundle_copy: Copy, tmp_path: Path) -> None:
    pack = referenced(bundle_copy, tmp_path)
    recipe = pack / RECIPE
    shipped = recipe.read_bytes()
    before = listing(pack)
    assert main(["recipe", "set", str(pack), "thread_num=1"]) == 0
    after = listing(pack)
    assert set(after) == set(before)  # no .bak, no .draftdeck-original/
    assert json.loads(after[RECIPE])["thread_num"] == 1
    data = app_dirs().data
    assert backup_path(recipe).is_relative_to(data) and original_path(recipe).is_relative_to(data)
    assert backup_path(recipe).read_bytes() == shipped
    assert original_path(recipe).read_bytes() == shipped
    # A second save keeps the first original; the .bak is the version before it.
    assert main(["recipe", "set", str(pack), "thread_num=3"]) == 0
    assert original_path(recipe).read_bytes() == shipped
    assert json.loads(backup_path(recipe).read_text())["thread_num"] == 1
    assert original_text(recipe) == shipped.decode()
    assert reset_to_original(recipe)
    assert recipe.read_bytes() == shipped
    assert set(listing(pack)) == set(before)


def test_a_pack_in_the_library_keeps_its_copies_beside_the_recipe(bundle_copy: Copy) -> None:
    library = Library(load_settings(), save_settings)
    pack = bundle_copy("qwen3-draft-noisy", library.root / "qwen3-draft-noisy")
    recipe = pack / RECIPE
    doc = RecipeDocument.load(recipe)
    doc.save({**doc.data, "thread_num": 1})
    assert backup_path(recipe) == pack / f"{RECIPE}.bak" and backup_path(recipe).is_file()
    assert original_path(recipe) == pack / ".draftdeck-original" / RECIPE


def test_an_old_referenced_pack_goes_on_using_its_kept_original(
    bundle_copy: Copy, tmp_path: Path
) -> None:
    pack = referenced(bundle_copy, tmp_path)
    recipe = pack / RECIPE
    shipped = recipe.read_bytes()
    # As an earlier DraftDeck left it: the shipped recipe kept in the pack, then edited.
    (pack / ".draftdeck-original").mkdir()
    (pack / ".draftdeck-original" / RECIPE).write_bytes(shipped)
    (pack / f"{RECIPE}.bak").write_bytes(shipped)
    edited = {**json.loads(shipped), "thread_num": 1}
    recipe.write_text(json.dumps(edited, indent=4))
    before = listing(pack)
    assert original_text(recipe) == shipped.decode()  # the diff is against what shipped
    doc = RecipeDocument.load(recipe)
    doc.save({**doc.data, "thread_num": 3})
    after = listing(pack)
    assert set(after) == set(before)
    assert after[f"{RECIPE}.bak"] == shipped  # the old .bak is left as it was
    assert json.loads(backup_path(recipe).read_text())["thread_num"] == 1
    # The kept original counts: no second "original" (the edited file) is taken.
    assert not list((app_dirs().data / "recipe-copies").rglob(f"original/{RECIPE}"))
    assert original_path(recipe) == pack / ".draftdeck-original" / RECIPE
    assert reset_to_original(recipe)
    assert recipe.read_bytes() == shipped


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_the_copies_keep_the_recipes_permissions(bundle_copy: Copy, tmp_path: Path) -> None:
    # In the pack (a library pack) and in DraftDeck's data folder (added by reference).
    for pack in (bundle_copy("qwen3-draft-noisy"), referenced(bundle_copy, tmp_path)):
        recipe = pack / RECIPE
        recipe.chmod(0o640)
        assert main(["recipe", "set", str(pack), "thread_num=1"]) == 0
        assert _mode(recipe) == 0o640  # the recipe keeps its own
        assert _mode(backup_path(recipe)) == 0o640 == _mode(original_path(recipe))
        recipe.chmod(0o644)  # a .bak already there takes the recipe's mode as it is now
        assert main(["recipe", "set", str(pack), "thread_num=3"]) == 0
        assert _mode(backup_path(recipe)) == 0o644
