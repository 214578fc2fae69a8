"""The Recipes page on a draft added by reference: saving and resetting leave the user's
folder holding only the recipe; DraftDeck's copies are in its data folder, named in the
Reset question and used by the diff against the pack's original."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.recipe.files import backup_path
from app.ui.recipes.recipe_fields import NumberEditor
from tests.helpers.folder_listing import listing
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
RECIPE = "config_cpu.json"


def _question() -> QMessageBox:
    (box,) = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "confirmDialog" and w.isVisible()
    ]
    return box


def test_save_and_reset_leave_a_referenced_folder_as_it_was(
    qtbot: QtBot, bundle_copy: Copy, tmp_path: Path
) -> None:
    draft = bundle_copy("qwen3-draft-noisy", tmp_path / "checkout" / "qwen3-draft-noisy")
    recipe = draft / RECIPE
    shipped = recipe.read_text()
    before = listing(draft)
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, ["qwen3-target"])
        window.library.add_folder(draft)
        window.library_page.refresh()
        window.show_page("pair")
        window.pair_page.choose(root / "qwen3-target", draft)
        window.show_page("recipes")
        page = window.recipes_page
        editor = page.draft_editor
        assert editor.path == recipe
        threads = editor.editors["thread_num"]
        assert isinstance(threads, NumberEditor)
        threads.spin.setValue(1)
        page.act_save.trigger()
        assert json.loads(recipe.read_text())["thread_num"] == 1
        assert set(listing(draft)) == set(before)
        assert backup_path(recipe).is_relative_to(app_dirs().data)
        diff = editor.diff_view.toPlainText()
        assert '-    "thread_num": 2' in diff and '+    "thread_num": 1' in diff
        page.tabs.setCurrentIndex(0)
        page.act_reset.trigger()
        box = _question()
        assert str(backup_path(recipe)) in box.text()
        next(b for b in box.buttons() if b.text() == "Reset").click()
        assert recipe.read_text() == shipped
        assert editor.data["thread_num"] == 2
        assert listing(draft) == before
