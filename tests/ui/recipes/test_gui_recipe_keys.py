"""The Recipes page's keys work wherever the focus is while the page is shown: reached
by a click in the sidebar, the focus stays there (Apply Preset's button takes none),
and Ctrl+S once did nothing right after Apply Preset while the Save button saved."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolBar, QWidget
from pytestqt.qtbot import QtBot

from app.ui.recipes.recipes_page import RecipesPage
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]
TARGET, DRAFT = "qwen3-target", "qwen3-draft-noisy"
TOKFORGE = "TokForge published recipe (phone)"  # target on opencl: a change to save


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(qtbot, bundle_copy, (TARGET, DRAFT), "library", desktop=False) as window:
        window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
        yield window


def _click_sidebar(window: MainWindow, title: str) -> QWidget:
    """Show a page as a user does, by a click on its name; the focus is the sidebar's."""
    sidebar = window.sidebar
    (item,) = sidebar.findItems(title, Qt.MatchFlag.MatchExactly)
    rect = sidebar.visualItemRect(item)
    QTest.mouseClick(sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert sidebar.currentItem() is item
    focused = QApplication.focusWidget()
    assert focused is sidebar  # the case: the focus is outside the page
    return focused


def _apply_preset(page: RecipesPage, name: str) -> None:
    """Choose the preset (the wheel over the list takes no focus) and click Apply."""
    combo = page.preset_combo
    combo.setCurrentIndex(combo.findText(name))
    (bar,) = page.presets.findChildren(QToolBar)
    QTest.mouseClick(bar.widgetForAction(page.act_preset), Qt.MouseButton.LeftButton)


def _press(widget: QWidget, key: Qt.Key, shift: bool = False) -> None:
    modifiers = Qt.KeyboardModifier.ControlModifier
    if shift:
        modifiers |= Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(widget, key, modifiers)


def _target_backend(window: MainWindow) -> object:
    path = window.library.root / TARGET / "config.json"
    return json.loads(path.read_text(encoding="utf-8")).get("backend_type")


def test_ctrl_s_right_after_apply_preset_saves(window: MainWindow) -> None:
    page = window.recipes_page
    focused = _click_sidebar(window, "Recipes")
    assert page.isVisible() and _target_backend(window) != "opencl"
    _apply_preset(page, TOKFORGE)
    assert page.has_unsaved() and QApplication.focusWidget() is focused
    # Undo and redo answer there too: the preset is one step on the shown file's stack.
    page.tabs.setCurrentWidget(page.target_editor)
    _press(focused, Qt.Key.Key_Z)
    assert page.target_editor.data.get("backend_type") != "opencl"
    _press(focused, Qt.Key.Key_Z, shift=True)
    assert page.target_editor.data["backend_type"] == "opencl"
    _press(focused, Qt.Key.Key_S)
    assert not page.has_unsaved()
    assert _target_backend(window) == "opencl"  # written, as the Save button writes it


def test_the_keys_stay_with_the_page_while_it_is_hidden(window: MainWindow) -> None:
    """Hidden, the page takes no key: Ctrl+S on the Library page saves no recipe."""
    page = window.recipes_page
    _click_sidebar(window, "Recipes")
    _apply_preset(page, TOKFORGE)
    page.tabs.setCurrentWidget(page.target_editor)
    focused = _click_sidebar(window, "Library")
    assert not page.isVisible() and page.has_unsaved()
    _press(focused, Qt.Key.Key_S)
    _press(focused, Qt.Key.Key_Z)
    assert page.has_unsaved() and page.target_editor.data["backend_type"] == "opencl"
    assert _target_backend(window) != "opencl"
