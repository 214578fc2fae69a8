"""A draft pack without config_cpu.json: the Recipes page says there is no draft recipe
(not an empty editor calling nothing "valid JSON") and starts one from a preset."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.recipe.files import draft_recipe_path
from app.core.recipe.presets import presets_for
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
TARGET, DRAFT = "qwen3-target", "qwen3-draft-noisy"


def test_no_draft_recipe_is_said_and_one_is_created_from_a_preset(
    qtbot: QtBot, bundle_copy: Copy
) -> None:
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, [TARGET, DRAFT])
        recipe = root / DRAFT / "config_cpu.json"
        recipe.unlink()
        window.show_page("pair")
        window.pair_page.choose(root / TARGET, root / DRAFT)
        window.show_page("recipes")
        page = window.recipes_page
        editor = page.draft_editor
        assert editor.stack.currentWidget() is editor.missing
        assert editor.missing.isVisible() and not editor.json_status.isVisible()
        assert editor.missing.title.text() == (
            f"No draft recipe: {DRAFT} has no config_cpu.json (nor draft_config_cpu.json)."
        )
        assert "config.json" in editor.missing.explanation.text()
        assert not page.act_reset.isEnabled()  # nothing the pack shipped to go back to
        # One preset list on the page: the missing file's, not also the one above the tabs.
        assert not page.presets.isVisible() and not page.preset_note.isVisible()
        presets = editor.missing.presets
        offered = [presets.itemText(i) for i in range(presets.count())]
        assert "Desktop CPU (lossless)" in offered
        presets.setCurrentIndex(offered.index("Desktop CPU (lossless)"))
        editor.missing.create_button.click()
        (preset,) = [p for p in presets_for(None) if p.name == "Desktop CPU (lossless)"]
        assert editor.data == dict(preset.draft)
        assert editor.stack.currentIndex() == 0 and editor.dirty
        assert page.presets.isVisible()  # a file to apply presets to: the list is back
        assert "not saved yet: Save creates config_cpu.json" in editor.json_status.text()
        page.undo()  # back to no recipe at all
        assert editor.stack.currentWidget() is editor.missing and not editor.dirty
        page.redo()
        page.act_save.trigger()
        assert json.loads(recipe.read_text()) == dict(preset.draft)
        assert draft_recipe_path(root / DRAFT) == recipe
        assert editor.stack.currentIndex() == 0 and not editor.dirty
        assert editor.json_status.text() == "✓ valid JSON"
        assert page.draft_twins.rule.text() == "DraftDeck runs the draft with config_cpu.json."


def test_deleting_all_the_json_is_json_that_does_not_parse(qtbot: QtBot, bundle_copy: Copy) -> None:
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, [TARGET, DRAFT])
        window.show_page("pair")
        window.pair_page.choose(root / TARGET, root / DRAFT)
        window.show_page("recipes")
        editor = window.recipes_page.draft_editor
        editor.json_edit.setPlainText("")
        editor.sync_from_json()  # raised EmptyFileError out of the slot before
        assert editor.json_error is not None and "empty" in editor.json_status.text()
        assert editor.dirty and not editor.fields_box.isEnabled()
        window.recipes_page.undo()
        assert editor.json_error is None and editor.data["thread_num"] == 2
