"""The Recipes page offscreen: "On the phone" (the pack's recipes) and each tab's "On this
computer" group (.draftdeck-this-computer.json): shown, edited on the tab's undo stack,
saved with the recipes, re-read when Tune wrote it, a broken file said and left alone,
host warnings pointing to it, and Move to This Computer, undone with Ctrl+Z."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop, update_desktop
from app.core.recipe.files import RecipeDocument, run_recipes
from app.ui.recipes.recipe_fields import NOT_SET, ChoiceEditor, NumberEditor
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]
TARGET, DRAFT = "fast-target", "fast-draft"
PHONE_TARGET = {"backend_type": "opencl", "thread_num": 68, "draft_predict_length": 3}
PHONE_DRAFT = {"backend_type": "cpu", "thread_num": 2, "power": "high", "memory": "low"}


def _phone_recipes(root: Path) -> None:
    config = json.loads((root / TARGET / "config.json").read_text())
    config.update(PHONE_TARGET)
    (root / TARGET / "config.json").write_text(json.dumps(config, indent=4) + "\n")
    (root / DRAFT / "config_cpu.json").write_text(json.dumps(PHONE_DRAFT, indent=4) + "\n")


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(
        qtbot, bundle_copy, (TARGET, DRAFT), "recipes", desktop=False, prepare=_phone_recipes
    ) as window:
        yield window
        for box in QApplication.topLevelWidgets():  # a question left open: not the next test's
            if isinstance(box, QMessageBox) and box.isVisible():
                box.done(0)


def _click(name: str, text: str) -> None:
    (box,) = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()
    ]
    next(b for b in box.buttons() if b.text() == text).click()


def _bytes(window: MainWindow) -> tuple[bytes, bytes]:
    root = window.library.root
    return (root / TARGET / "config.json").read_bytes(), (
        root / DRAFT / "config_cpu.json"
    ).read_bytes()


def test_both_are_shown_and_this_computer_is_edited_saved_and_undone(window: MainWindow) -> None:
    page, root = window.recipes_page, window.library.root
    assert "On the phone: the pack's recipes, what a push sends" in page.subtitle.text()
    group = page.target_desktop
    assert group.title() == "On this computer (DraftDeck)"
    assert "never pushed to a phone and never published" in group.toolTip()
    assert THIS_COMPUTER_FILE in group.note.toolTip()
    assert "Nothing set: here it runs as on the phone" in group.note.text()
    threads, backend = group.editors["thread_num"], group.editors["backend_type"]
    assert isinstance(threads, NumberEditor) and isinstance(backend, ChoiceEditor)
    # Unset rows say what the phone's recipe leaves in force, and what runs here.
    assert threads.spin.specialValueText() == "(as on the phone: 68; 2 here)".replace(
        "2", str(run_recipes(root / TARGET, None)[0]["thread_num"])
    )
    assert backend.combo.itemText(0) == "(as on the phone: opencl; cpu here)"
    # The target's backend warning points here, not at the phone's recipe.
    warnings = [str(p) for p in page.target_editor.problems if p.key == "backend_type"]
    assert len(warnings) == 1 and "under On this computer" in warnings[0]
    phone = _bytes(window)

    page.tabs.setCurrentIndex(1)
    threads.spin.setValue(1)
    memory = group.editors["memory"]
    assert isinstance(memory, ChoiceEditor)
    memory.combo.setCurrentIndex(memory.combo.findData("normal"))
    assert page.has_unsaved() and page.tabs.tabText(1).endswith("•")
    assert "Unsaved changes in the settings for this computer" in page.save_note.text()
    assert not (root / TARGET / THIS_COMPUTER_FILE).exists()  # only Save writes
    page.undo()
    assert group.keys() == {"thread_num": 1}
    page.redo()
    page.act_save.trigger()
    assert read_desktop(root / TARGET).of("config.json") == {"thread_num": 1, "memory": "normal"}
    assert _bytes(window) == phone  # the phone's recipes untouched
    assert not page.has_unsaved()
    assert "Here DraftDeck runs it with thread_num 1, memory normal" in group.note.text()
    # What runs here is the pack's recipe under these.
    target_run, _ = run_recipes(root / TARGET, root / DRAFT)
    assert (target_run["thread_num"], target_run["memory"]) == (1, "normal")
    # Setting a row back to "as on the phone" takes the key out.
    threads.spin.setValue(int(threads.spin.minimum()))
    assert threads.value() is NOT_SET and group.keys() == {"memory": "normal"}


def test_tune_s_apply_elsewhere_is_read_again_and_a_broken_file_left_alone(
    window: MainWindow,
) -> None:
    page, root = window.recipes_page, window.library.root
    update_desktop(root / DRAFT, "config_cpu.json", {"thread_num": 1})  # as Tune's Apply
    window.show_page("pair")
    window.show_page("recipes")
    assert page.draft_desktop.keys() == {"thread_num": 1} and not page.has_unsaved()
    (root / TARGET / THIS_COMPUTER_FILE).write_text('{"version": 1, "config.json": {"power": 1}}')
    window.show_page("pair")
    window.show_page("recipes")
    group = page.target_desktop
    assert group.problem.isVisibleTo(group) and not group.fields.isEnabled()
    assert "'power': not a setting of this computer" in group.problem.text()
    assert (root / TARGET / THIS_COMPUTER_FILE).read_text().endswith('{"power": 1}}')


def test_move_to_this_computer_takes_desktop_values_out_as_one_undo(window: MainWindow) -> None:
    page, root = window.recipes_page, window.library.root
    # An earlier DraftDeck saved desktop values into both recipes.
    for recipe, values in (
        (root / TARGET / "config.json", {"backend_type": "cpu", "thread_num": 1}),
        (root / DRAFT / "config_cpu.json", {"thread_num": 1, "memory": "normal"}),
    ):
        doc = RecipeDocument.load(recipe)
        doc.save({**doc.data, **values})
    window.show_page("pair")
    window.show_page("recipes")
    running = run_recipes(root / TARGET, root / DRAFT)
    memory_warning = [p for p in page.draft_editor.problems if p.key == "memory"]
    assert memory_warning and "normal is a desktop value" in memory_warning[0].message
    page.draft_desktop.move_button.click()  # in either tab: both recipes are looked at
    box = page._question
    assert box is not None
    assert "fast-target/config.json thread_num: 1 → this computer" in box.text()
    assert "the phone's recipe gets back 68" in box.text()
    assert "fast-draft/config_cpu.json memory: normal → this computer" in box.text()
    _click("confirmDialog", "Move")
    assert page.target_editor.data["thread_num"] == 68
    assert page.target_editor.data["backend_type"] == "opencl"
    assert page.draft_editor.data["memory"] == "low" and page.draft_editor.data["thread_num"] == 2
    assert page.target_desktop.keys() == {"backend_type": "cpu", "thread_num": 1}
    page.act_save.trigger()
    assert json.loads((root / TARGET / "config.json").read_text())["thread_num"] == 68
    assert json.loads((root / DRAFT / "config_cpu.json").read_text()) == PHONE_DRAFT
    assert run_recipes(root / TARGET, root / DRAFT) == running  # what runs here is the same
    # One undo per tab takes the move back (the recipe and this computer's settings).
    page.tabs.setCurrentIndex(1)
    page.undo()
    assert page.target_editor.data["thread_num"] == 1 and page.target_desktop.keys() == {}
    page.act_save.trigger()
    assert json.loads((root / TARGET / "config.json").read_text())["thread_num"] == 1
    assert read_desktop(root / TARGET).of("config.json") == {}
