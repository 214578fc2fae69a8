"""The Library page as a polished list: a right-click menu on a pack, a filter box whose
hint is read whole, and counts that agree with their nouns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QAction, QContextMenuEvent, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu, QStyle, QStyleOptionFrame
from pytestqt.qtbot import QtBot

from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
PACKS = ("qwen3-target", "qwen3-draft-noisy", "qwen3-draft-identical")
# A popup menu asks for what the offscreen platform cannot do; harmless here.
POPUP = pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing the keyboard"
)


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        add_packs(win, bundle_copy, PACKS, desktop=True)
        yield win


def _row(window: MainWindow, name: str) -> int:
    proxy = window.library_page.proxy
    return next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data() == name)


def _menu_on(qtbot: QtBot, window: MainWindow, name: str) -> QMenu:
    """Right-click the pack's row, as the mouse does; the menu that opens."""
    table = window.library_page.table
    spot = table.visualRect(window.library_page.proxy.index(_row(window, name), 0)).center()
    event = QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, spot, table.viewport().mapToGlobal(spot)
    )
    QApplication.sendEvent(table.viewport(), event)
    qtbot.waitUntil(lambda: _open_menu(window) is not None)
    menu = _open_menu(window)
    assert menu is not None
    return menu


def _open_menu(window: MainWindow) -> QMenu | None:
    menus = [m for m in window.findChildren(QMenu, "packMenu") if m.isVisible()]
    return menus[-1] if menus else None


def _action(menu: QMenu, text: str) -> QAction:
    return next(a for a in menu.actions() if a.text().replace("&", "") == text)


def _texts(menu: QMenu) -> list[str]:
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


@POPUP
def test_right_click_a_pack_offers_what_can_be_done_with_it(
    qtbot: QtBot, window: MainWindow
) -> None:
    page = window.library_page
    menu = _menu_on(qtbot, window, "qwen3-draft-noisy")
    selected = page.selected_entry()
    assert selected is not None and selected.name == "qwen3-draft-noisy"  # the row clicked
    assert _texts(menu) == [
        "Use as Target",
        "Use as Draft",
        "Measure Pack…",
        "Copy Path",
        "Open Location",
        "Remove…",
    ]
    use_target = _action(menu, "Use as Target")
    assert not use_target.isEnabled()  # a draft-only pack: not offered as a target
    measure = _action(menu, "Measure Pack…")
    assert measure.isEnabled()  # a draft: measured against targets
    measure.trigger()  # the window opens File → Measure Pack… on it
    dialog = window.pack_making.measure_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.choices.draft_box.currentText() == "qwen3-draft-noisy")
    dialog.close()
    menu = _menu_on(qtbot, window, "qwen3-draft-noisy")
    _action(menu, "Copy Path").trigger()
    path = str(window.library.root / "qwen3-draft-noisy")
    assert QGuiApplication.clipboard().text() == path
    assert window.statusBar().currentMessage() == f"Copied {path}"
    menu.close()

    # Use as Draft: the Pair page, with that draft for the chosen target.
    menu = _menu_on(qtbot, window, "qwen3-draft-identical")
    _action(menu, "Use as Draft").trigger()
    assert window.current_page_key() == "pair"
    qtbot.waitUntil(lambda: not window.pair_page.loading())  # read on a worker thread
    target, draft = window.pair_page.current()
    assert target is not None and target.name == "qwen3-target"
    assert draft is not None and draft.name == "qwen3-draft-identical"
    assert window.selection.draft == window.library.root / "qwen3-draft-identical"


@POPUP
def test_the_menu_key_opens_it_on_the_selected_pack(qtbot: QtBot, window: MainWindow) -> None:
    page = window.library_page
    page.table.selectRow(_row(window, "qwen3-target"))
    spot = QPoint(1, 1)  # from the keyboard, not where the pointer is
    event = QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, spot, page.table.mapToGlobal(spot))
    QApplication.sendEvent(page.table, event)  # the key goes to the focused table
    qtbot.waitUntil(lambda: _open_menu(window) is not None)
    menu = _open_menu(window)
    assert menu is not None
    selected = page.selected_entry()
    assert selected is not None and selected.name == "qwen3-target"
    assert _action(menu, "Use as Target").isEnabled()  # qwen3-target can be either
    assert _action(menu, "Measure Pack…").isEnabled()  # and so a draft too
    _action(menu, "Use as Target").trigger()
    assert window.current_page_key() == "pair"
    qtbot.waitUntil(lambda: not window.pair_page.loading())  # read on a worker thread
    target, _ = window.pair_page.current()
    assert target is not None and target.name == "qwen3-target"


def test_the_filter_hint_is_not_cut(window: MainWindow) -> None:
    edit = window.library_page.filter_edit
    assert edit.placeholderText() == "Filter packs (Ctrl+F)"
    option = QStyleOptionFrame()
    edit.initStyleOption(option)
    contents = edit.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, edit)
    text_room = contents.width() - 2 * 2  # QLineEdit keeps 2 px each side of its text
    assert edit.fontMetrics().horizontalAdvance(edit.placeholderText()) <= text_room


def test_the_pack_count_agrees_with_its_noun(
    qtbot: QtBot, window: MainWindow, bundle_copy: Copy
) -> None:
    page = window.library_page
    page.refresh()
    assert window.statusBar().currentMessage().startswith("3 packs (")
    for name in PACKS[1:]:
        page.table.selectRow(_row(window, name))
        entry = page.selected_entry()
        assert entry is not None
        page._remove(entry)  # what Remove does once asked
    page.refresh()
    assert window.statusBar().currentMessage().startswith("1 pack (")
