"""The Recipes page's "Drafting (DraftDeck)" group offscreen: the draft pack's own
.draftdeck-drafting.json shown, edited on the draft recipe's undo stack, saved with the
recipes, re-read when changed elsewhere, and a broken file said and left alone."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QSpinBox
from pytestqt.qtbot import QtBot

from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.ui.recipes.recipe_drafting import DraftingGroup
from app.ui.recipes.recipe_fields import NumberEditor
from app.ui.recipes.recipes_page import RecipesPage
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]
TARGET, DRAFT = "qwen3-target", "qwen3-draft-noisy"
KEPT = DraftingSettings(adaptive=True, stop_below=0.3)


def _open(
    qtbot: QtBot, bundle_copy: Copy, settings: DraftingSettings | None
) -> Iterator[MainWindow]:
    def prepare(root: Path) -> None:
        if settings is not None:
            write_drafting(root / DRAFT, settings)

    with open_on_page(qtbot, bundle_copy, (TARGET, DRAFT), "recipes", prepare=prepare) as window:
        yield window
        for box in QApplication.topLevelWidgets():  # a question left open: not the next test's
            if isinstance(box, QMessageBox) and box.isVisible():
                box.done(0)


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The page on a draft pack whose file holds KEPT."""
    yield from _open(qtbot, bundle_copy, KEPT)


@pytest.fixture
def bare(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The page on a draft pack without the file."""
    yield from _open(qtbot, bundle_copy, None)


def _pack(window: MainWindow) -> Path:
    return window.library.root / DRAFT


def _group(window: MainWindow) -> DraftingGroup:
    return window.recipes_page.drafting


def _shown(group: DraftingGroup) -> DraftingSettings:
    return DraftingSettings(group.adaptive.isChecked(), group.stop_below.value())


def _click(name: str, text: str) -> None:
    (box,) = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()
    ]
    next(b for b in box.buttons() if b.text() == text).click()


def _show_again(window: MainWindow) -> None:
    """Leave the page and come back, as a user does after switching in Chat."""
    window.show_page("pair")
    window.show_page("recipes")


def test_shows_the_packs_settings(window: MainWindow) -> None:
    group, page = _group(window), window.recipes_page
    assert _shown(group) == KEPT and group.settings == KEPT
    assert group.fields.isEnabled() and not group.problem.isVisible()
    assert DRAFTING_FILE in group.note.text() and "TokForge" in group.note.text()
    for tip in (group.adaptive.toolTip(), group.stop_below.toolTip()):
        assert DRAFTING_FILE in tip and "MNN and TokForge do not read" in tip
    assert not page.has_unsaved() and not page.act_save.isEnabled()


def test_without_a_file_the_defaults_show_and_nothing_is_written(bare: MainWindow) -> None:
    group = _group(bare)
    assert _shown(group) == DraftingSettings()  # whatever the default is today
    assert group.fields.isEnabled() and "no .draftdeck-drafting.json yet" in group.note.text()
    assert not bare.recipes_page.has_unsaved()
    _show_again(bare)
    assert not (_pack(bare) / DRAFTING_FILE).exists()


def test_edits_are_saved_with_the_recipe_save(bare: MainWindow) -> None:
    page, group = bare.recipes_page, _group(bare)
    recipe = (_pack(bare) / "config_cpu.json").read_bytes()
    wanted = DraftingSettings(not DraftingSettings().adaptive, 0.45)
    group.adaptive.click()
    group.stop_below.setValue(0.45)
    assert page.has_unsaved() and page.tabs.tabText(0).endswith("•")
    assert "drafting settings" in page.save_note.text()
    assert not (_pack(bare) / DRAFTING_FILE).exists()  # only Save writes
    page.act_save.trigger()
    assert read_drafting(_pack(bare)) == wanted
    assert (_pack(bare) / "config_cpu.json").read_bytes() == recipe  # MNN's file untouched
    assert not page.has_unsaved() and DRAFTING_FILE in page.save_note.text()
    assert "no .draftdeck-drafting.json yet" not in group.note.text()


def _threads(page: RecipesPage) -> QSpinBox:
    threads = page.draft_editor.editors["thread_num"]
    assert isinstance(threads, NumberEditor) and isinstance(threads.spin, QSpinBox)
    return threads.spin


def test_undo_takes_back_drafting_and_recipe_edits_in_order(window: MainWindow) -> None:
    page, group = window.recipes_page, _group(window)
    threads = _threads(page)
    before = threads.value()
    threads.setValue(before + 1)
    group.stop_below.setValue(0.4)
    group.stop_below.setValue(0.5)  # one step with the one before
    group.adaptive.click()
    assert "adaptive" in page.act_undo.toolTip().lower()
    page.act_undo.trigger()
    assert _shown(group) == DraftingSettings(True, 0.5)
    page.act_undo.trigger()
    assert _shown(group) == KEPT and threads.value() == before + 1
    page.act_undo.trigger()
    assert threads.value() == before and not page.has_unsaved()
    page.act_redo.trigger()
    page.act_redo.trigger()
    assert _shown(group) == DraftingSettings(True, 0.5) and page.has_unsaved()


def test_ctrl_z_in_the_stop_box_undoes_through_the_page(window: MainWindow, qtbot: QtBot) -> None:
    group = _group(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    group.stop_below.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    focused = QApplication.focusWidget()
    assert focused is not None
    QTest.keyClick(focused, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(focused, "0.7")
    assert group.settings.stop_below == pytest.approx(0.7)
    QTest.keyClick(focused, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert group.settings == KEPT and _shown(group) == KEPT
    assert not window.recipes_page.has_unsaved()


def test_revert_throws_drafting_edits_away_undoably(window: MainWindow) -> None:
    page, group = window.recipes_page, _group(window)
    group.adaptive.click()
    assert page.act_revert.isEnabled()  # the recipe itself has no edits
    page.act_revert.trigger()
    _click("confirmDialog", "Revert")
    assert _shown(group) == KEPT and not page.has_unsaved()
    page.act_undo.trigger()
    assert not group.adaptive.isChecked() and page.has_unsaved()


def test_a_change_elsewhere_is_picked_up(window: MainWindow) -> None:
    theirs = DraftingSettings(adaptive=False, stop_below=0.6)
    write_drafting(_pack(window), theirs)  # as Chat's switch or `--adaptive` writes it
    _show_again(window)
    group = _group(window)
    assert _shown(group) == theirs and not window.recipes_page.has_unsaved()
    window.recipes_page.act_undo.trigger()  # picking it up is a step like a recipe's
    assert _shown(group) == KEPT


def test_a_change_elsewhere_under_edits_asks_before_overwriting(window: MainWindow) -> None:
    page, group = window.recipes_page, _group(window)
    group.stop_below.setValue(0.8)
    theirs = dataclasses.replace(KEPT, adaptive=False)
    write_drafting(_pack(window), theirs)
    _show_again(window)
    assert group.settings.stop_below == pytest.approx(0.8)  # the edit stays
    page.act_save.trigger()
    _click("confirmDialog", "Cancel")
    assert read_drafting(_pack(window)) == theirs and page.has_unsaved()
    page.act_save.trigger()
    _click("confirmDialog", "Overwrite")
    assert read_drafting(_pack(window)) == DraftingSettings(True, 0.8)
    assert not page.has_unsaved()


def test_a_broken_file_is_said_and_left_alone(bare: MainWindow) -> None:
    path = _pack(bare) / DRAFTING_FILE
    path.write_text('{"adaptive": "yes"}\n')
    _show_again(bare)
    page, group = bare.recipes_page, _group(bare)
    assert group.problem.isVisible() and not group.fields.isEnabled()
    said = group.problem.text()
    assert f"{DRAFT}/{DRAFTING_FILE}" in said and "adaptive must be true or false" in said
    assert group.problem.toolTip() == str(path)
    _threads(page).setValue(3)  # a recipe edit saves; the broken file is not touched
    page.act_save.trigger()
    assert path.read_text() == '{"adaptive": "yes"}\n' and not page.has_unsaved()
    write_drafting(_pack(bare), KEPT)  # fixed by hand: shown when the page is next opened
    _show_again(bare)
    assert not group.problem.isVisible() and group.fields.isEnabled()
    assert _shown(group) == KEPT
