"""The Recipes page follows the chosen pair: another pair chosen under unsaved edits asks
Save, Discard or Cancel at the moment it is chosen (not when Recipes is next shown):
Cancel keeps the pair in use everywhere, Save saves then switches, Discard switches."""

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
    chosen on the Pair page (the Recipes page not shown again)."""
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
        yield window
        for box in QApplication.topLevelWidgets():  # a question left open: not the next test's
            if isinstance(box, QMessageBox) and box.isVisible():
                box.done(0)


def _recipe(window: MainWindow, draft: str) -> Path:
    return window.library.root / draft / "config_cpu.json"


def _pack(window: MainWindow, name: str) -> Path:
    return window.library.root / name


def test_the_question_comes_when_the_pair_is_chosen(window: MainWindow) -> None:
    box = _box("choiceDialog")
    assert f"draft {SECOND} with target {TARGET}" in box.text()
    assert str(_recipe(window, FIRST)) in box.text()
    assert {b.text() for b in box.buttons()} == {"Save and Switch", "Discard and Switch", "Cancel"}
    # Until answered, Chat and Tune still use the pair in use.
    assert window.selection.draft == _pack(window, FIRST)


def test_cancel_keeps_the_old_pair_everywhere(window: MainWindow, qtbot: QtBot) -> None:
    _click("choiceDialog", "Cancel")
    assert window.selection.draft == _pack(window, FIRST)
    _, shown = window.pair_page.current()
    assert shown is not None and shown.path == _pack(window, FIRST)  # the Pair page too
    page = window.recipes_page
    window.show_page("recipes")
    assert page.has_unsaved() and page.draft_editor.path == _recipe(window, FIRST)
    assert not page.held_note.isVisible()
    assert not [
        w
        for w in QApplication.topLevelWidgets()
        if w.isVisible() and w.objectName() == "choiceDialog"
    ]


def test_save_writes_the_edits_then_switches(window: MainWindow, qtbot: QtBot) -> None:
    _click("choiceDialog", "Save and Switch")
    assert json.loads(_recipe(window, FIRST).read_text())["thread_num"] == 1
    assert window.selection.draft == _pack(window, SECOND)
    page = window.recipes_page
    window.show_page("recipes")
    qtbot.waitUntil(lambda: page.draft_editor.path == _recipe(window, SECOND), timeout=10_000)
    assert not page.held_note.isVisible() and not page.has_unsaved()
    assert SECOND in page.subtitle.text()


def test_discard_switches_and_leaves_the_file(window: MainWindow, qtbot: QtBot) -> None:
    shipped = _recipe(window, FIRST).read_text()
    _click("choiceDialog", "Discard and Switch")
    assert window.selection.draft == _pack(window, SECOND)
    page = window.recipes_page
    window.show_page("recipes")
    assert page.draft_editor.path == _recipe(window, SECOND) and not page.has_unsaved()
    assert _recipe(window, FIRST).read_text() == shipped


def test_the_matrix_and_the_library_ask_too(window: MainWindow) -> None:
    _click("choiceDialog", "Cancel")
    window.library_page.use_in_pair.emit("draft", _pack(window, SECOND))
    _click("choiceDialog", "Cancel")
    assert window.selection.draft == _pack(window, FIRST)
