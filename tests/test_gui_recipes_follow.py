"""The Recipes page follows the chosen pair: another pair chosen under unsaved edits asks
Save, Discard or Cancel; after Cancel the page says whose files it shows, and opens the
chosen pair's as soon as nothing is left unsaved (Revert, Save), without leaving it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.ui.recipes.recipe_fields import NumberEditor
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
TARGET, FIRST, SECOND = "qwen3-target", "qwen3-draft-noisy", "qwen3-draft-identical"


def _box(name: str) -> QMessageBox:
    (box,) = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()
    ]
    return box


def _click(name: str, text: str) -> None:
    box = _box(name)
    next(b for b in box.buttons() if b.text() == text).click()


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The first pair's draft recipe edited (threads 1, unsaved), then the second pair
    chosen on the Pair page and the Recipes page shown again."""
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, [TARGET, FIRST, SECOND])
        window.show_page("pair")
        window.pair_page.choose(root / TARGET, root / FIRST)
        window.show_page("recipes")
        threads = window.recipes_page.draft_editor.editors["thread_num"]
        assert isinstance(threads, NumberEditor)
        threads.spin.setValue(1)
        window.show_page("pair")
        window.pair_page.choose(root / TARGET, root / SECOND)
        window.show_page("recipes")
        yield window


def _recipe(window: MainWindow, draft: str) -> Path:
    return window.library.root / draft / "config_cpu.json"


def test_save_writes_the_edits_and_opens_the_chosen_pair(window: MainWindow, qtbot: QtBot) -> None:
    page = window.recipes_page
    box = _box("choiceDialog")
    assert f"draft {SECOND} with target {TARGET}" in box.text()
    assert str(_recipe(window, FIRST)) in box.text()
    assert {b.text() for b in box.buttons()} == {"Save and Open", "Discard and Open", "Cancel"}
    _click("choiceDialog", "Save and Open")
    assert json.loads(_recipe(window, FIRST).read_text())["thread_num"] == 1
    qtbot.waitUntil(lambda: page.draft_editor.path == _recipe(window, SECOND), timeout=10_000)
    assert not page.held_note.isVisible() and not page.has_unsaved()
    assert SECOND in page.subtitle.text()


def test_after_cancel_and_revert_the_chosen_pair_is_shown(window: MainWindow, qtbot: QtBot) -> None:
    page = window.recipes_page
    shipped = _recipe(window, FIRST).read_text()
    _click("choiceDialog", "Cancel")
    assert page.draft_editor.path == _recipe(window, FIRST)  # the edits are still here
    assert page.held_note.isVisible()
    assert f"previous pair (draft {FIRST} with target {TARGET})" in page.held_note.text()
    assert f"chosen pair (draft {SECOND} with target {TARGET})" in page.held_note.text()
    page.tabs.setCurrentIndex(0)
    page.act_revert.trigger()
    _click("confirmDialog", "Revert")
    qtbot.waitUntil(lambda: page.draft_editor.path == _recipe(window, SECOND), timeout=10_000)
    assert not page.held_note.isVisible()
    assert _recipe(window, FIRST).read_text() == shipped


def test_discard_opens_the_chosen_pair_and_leaves_the_file(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.recipes_page
    shipped = _recipe(window, FIRST).read_text()
    _click("choiceDialog", "Discard and Open")
    assert page.draft_editor.path == _recipe(window, SECOND) and not page.has_unsaved()
    assert _recipe(window, FIRST).read_text() == shipped


def test_each_showing_asks_again_while_the_edits_stay(window: MainWindow) -> None:
    _click("choiceDialog", "Cancel")
    window.show_page("chat")
    window.show_page("recipes")
    _click("choiceDialog", "Discard and Open")
    assert window.recipes_page.draft_editor.path == _recipe(window, SECOND)
