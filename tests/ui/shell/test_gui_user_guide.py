"""Help > User Guide (F1) shows the guide under docs/guide inside the window, offline;
following a link shows that page, Back returns; a link to a file the guide does not
have says so instead of showing a blank page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from app.core.infra.guide_files import INDEX, guide_folder, reachable
from app.ui.shell.main_window import MainWindow
from app.ui.shell.user_guide import IMAGE_WIDTH, UserGuideDialog
from tests.helpers.windows import open_window


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        win.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
        yield win


def _opened_with_f1(qtbot: QtBot, window: MainWindow) -> UserGuideDialog:
    QTest.keyClick(window.sidebar, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: window.findChild(UserGuideDialog) is not None)
    dialog = window.findChild(UserGuideDialog)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_f1_opens_the_guide_and_a_link_shows_its_page(qtbot: QtBot, window: MainWindow) -> None:
    (help_menu,) = [a.menu() for a in window.menuBar().actions() if a.text() == "&Help"]
    assert isinstance(help_menu, QMenu)
    assert "&User Guide" in [a.text() for a in help_menu.actions()]
    dialog = _opened_with_f1(qtbot, window)
    assert dialog.page() == guide_folder() / INDEX
    assert "DraftDeck user guide" in dialog.browser.toPlainText()
    # Follow the first link with the keyboard, as a user can: Tab to it, Enter.
    dialog.browser.setFocus()
    qtbot.waitUntil(dialog.browser.hasFocus)
    QTest.keyClick(dialog.browser, Qt.Key.Key_Tab)
    QTest.keyClick(dialog.browser, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: dialog.page().name == "library.md")
    assert dialog.browser.toPlainText().startswith("Library")
    assert "Shows every pack installed on this computer" in dialog.browser.toPlainText()
    dialog.browser.backward()
    assert dialog.page().name == INDEX
    assert _opened_with_f1(qtbot, window) is dialog  # F1 again: the same window


def test_a_link_the_guide_lacks_is_said(qtbot: QtBot, tmp_path: Path, window: MainWindow) -> None:
    """A guide (here one made by the test) whose page links to a file that is not there."""
    (tmp_path / INDEX).write_text("# Guide\n\n[Gone](gone.md) and [Here](here.md)\n")
    (tmp_path / "here.md").write_text("# Here\n\nA page.\n")
    dialog = UserGuideDialog(window, tmp_path)
    qtbot.addWidget(dialog)
    dialog.browser.anchorClicked.emit(dialog.browser.source().resolved("gone.md"))
    assert dialog.page() == tmp_path / INDEX  # stayed where it was
    assert "gone.md is not part of the guide" in dialog.note.text()
    dialog.browser.anchorClicked.emit(dialog.browser.source().resolved("here.md"))
    assert dialog.page() == tmp_path / "here.md" and dialog.note.text() == ""


def test_a_missing_guide_is_said(qtbot: QtBot, tmp_path: Path, window: MainWindow) -> None:
    dialog = UserGuideDialog(window, tmp_path / "nowhere")
    qtbot.addWidget(dialog)
    assert "User guide not found" in dialog.browser.toPlainText()
    assert str(tmp_path / "nowhere" / INDEX) in dialog.browser.toPlainText()


def test_screenshots_are_scaled_to_the_page(qtbot: QtBot, window: MainWindow) -> None:
    dialog = UserGuideDialog(window, guide_folder())
    qtbot.addWidget(dialog)
    shot = guide_folder().parent / "library.png"
    image = dialog.browser.loadResource(2, dialog.browser.source().resolved("../library.png"))
    assert shot.is_file() and image.width() == IMAGE_WIDTH  # type: ignore[attr-defined]


def test_every_page_and_picture_the_guide_links_to_exists() -> None:
    files, missing = reachable(guide_folder() / INDEX)
    assert not missing, f"the guide links to files that are not there: {missing}"
    names = {f.name for f in files}
    for page in ("library.md", "chat.md", "cli.md", "troubleshooting.md", "library.png"):
        assert page in names
