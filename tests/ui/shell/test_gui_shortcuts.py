"""Keys to switch pages, and Help's list of every key the window answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from pytestqt.qtbot import QtBot

from app.ui.shell.main_window import MainWindow
from app.ui.shell.shortcuts import ANYWHERE, ShortcutsDialog
from tests.helpers.windows import open_window

PAGES = ("Library", "Downloads", "Pair", "Recipes", "Chat", "Tune", "Phone")


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        win.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
        yield win


def _focus(qtbot: QtBot, widget: QWidget) -> None:
    widget.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)


def test_ctrl_number_shows_each_page_from_anywhere(qtbot: QtBot, window: MainWindow) -> None:
    assert [window.sidebar.item(r).text() for r in range(window.sidebar.count())] == list(PAGES)
    window.show_page("chat")
    _focus(qtbot, window.chat_page.input)  # a text box that takes most keys
    for number, title in reversed(list(enumerate(PAGES, start=1))):
        focused = QApplication.focusWidget() or window
        QTest.keyClick(
            focused, Qt.Key(Qt.Key.Key_0.value + number), Qt.KeyboardModifier.ControlModifier
        )
        assert window.sidebar.currentItem().text() == title
        assert window.stack.currentWidget() is window.pages[list(window.pages)[number - 1]]


def _menu(window: MainWindow, title: str) -> QMenu:
    (menu,) = [a.menu() for a in window.menuBar().actions() if a.text() == title]
    assert isinstance(menu, QMenu)
    return menu


def test_the_view_menu_lists_the_pages_with_their_keys(window: MainWindow) -> None:
    listed = [(a.text(), a.shortcut().toString()) for a in _menu(window, "&View").actions()]
    assert listed == [(title, f"Ctrl+{n}") for n, title in enumerate(PAGES, start=1)]


def _opened(qtbot: QtBot, window: MainWindow) -> ShortcutsDialog:
    QTest.keyClick(window.sidebar, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.findChild(ShortcutsDialog) is not None)
    dialog = window.findChild(ShortcutsDialog)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def _table(dialog: ShortcutsDialog) -> list[tuple[str, str, str]]:
    table = dialog.table

    def text(row: int, column: int) -> str:
        item = table.item(row, column)
        assert item is not None
        return item.text()

    return [(text(r, 0), text(r, 1), text(r, 2)) for r in range(table.rowCount())]


def test_help_lists_the_keys_with_what_they_do_and_where(qtbot: QtBot, window: MainWindow) -> None:
    assert "&Keyboard Shortcuts" in [a.text() for a in _menu(window, "&Help").actions()]
    rows = _table(_opened(qtbot, window))
    for n, title in enumerate(PAGES, start=1):
        assert (f"Ctrl+{n}", f"Show the {title} page", ANYWHERE) in rows
    assert ("Ctrl+O", "Add a pack folder", ANYWHERE) in rows
    assert ("Ctrl+F", "Filter the list", "Library") in rows
    assert ("Ctrl+S", "Save", "Recipes") in rows  # no "or Save": a key few keyboards have
    assert ("Esc", "Stop generating", "Chat") in rows
    assert ("F5", "Re-read the phone", "Phone") in rows
    assert ("F5", "Re-read the library", "Library") in rows
    # Tune's keys, added on its page, are listed without being written down here.
    tune = {keys for keys, _what, where in rows if where == "Tune"}
    assert {"Ctrl+Return", "Esc", "Ctrl+Shift+A"} <= tune
    # Keys that work anywhere first, then the pages in the sidebar's order.
    order = [ANYWHERE, *PAGES]
    wheres = [order.index(where) for _keys, _what, where in rows]
    assert wheres == sorted(wheres)


def test_every_key_the_window_answers_is_listed(qtbot: QtBot, window: MainWindow) -> None:
    """Read from the window's actions and shortcuts, so a key a page adds (Tune's, say)
    is listed without anyone writing it down."""
    rows = _table(_opened(qtbot, window))
    listed = {keys for keys, _what, _where in rows}
    bound = [a.shortcut() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    bound += [s.key() for s in window.findChildren(QShortcut) if not s.key().isEmpty()]
    for sequence in bound:
        text = sequence.toString(QKeySequence.SequenceFormat.NativeText)
        assert any(text in keys.split(" or ") for keys in listed), text
    assert all(what for _keys, what, _where in rows)
