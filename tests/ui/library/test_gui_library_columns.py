"""The Library table at 1024x700 and 1600x1000 with a half-copied pack: Status keeps
the room to say which file is broken (elided at its end), Path elides at its start
but keeps the pack folder readable, and the details pane shows the whole error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.ui.base.fitted_table import ElideDelegate
from app.ui.library.library_model import COLUMNS, ENTRY_ROLE
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, half_copied, open_window

Copy = Callable[..., Path]
BROKEN = "half-copied-pack"


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        names = ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target", "fast-draft")
        half_copied(bundle_copy, add_packs(win, bundle_copy, names) / BROKEN)
        yield win


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)])
def test_status_says_which_file_and_path_keeps_the_pack_folder(
    window: MainWindow, qtbot: QtBot, size: tuple[int, int]
) -> None:
    window.resize(*size)
    page = window.library_page
    page.refresh()
    table = page.table
    qtbot.waitUntil(lambda: table.viewport().width() > size[0] // 2)
    qtbot.waitUntil(lambda: not table.measuring())  # a column per turn, then fitted
    table.fit_columns()
    status, path = COLUMNS.index("Status"), COLUMNS.index("Path")
    metrics = table.fontMetrics()
    # The start of the status (which file) and the end of the path (which pack) fit.
    assert table.columnWidth(status) > metrics.horizontalAdvance("Error: llm.mnn.weight …")
    assert table.columnWidth(path) > metrics.horizontalAdvance(f"…/{BROKEN}")
    assert table.horizontalScrollBar().maximum() == 0  # and nothing scrolls sideways
    # Status is cut at its end, Path at its start.
    assert table.textElideMode() == Qt.TextElideMode.ElideRight
    delegate = table.itemDelegateForColumn(path)
    assert isinstance(delegate, ElideDelegate) and delegate.mode == Qt.TextElideMode.ElideLeft
    row = next(r for r in range(page.proxy.rowCount()) if page.proxy.index(r, 0).data() == BROKEN)
    entry = page.proxy.index(row, 0).data(ENTRY_ROLE)
    assert entry.error is not None
    tip = page.proxy.index(row, status).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == str(entry.error)  # the whole error, with its file's path
    # Path gives way before Status: Status is never the narrower of the two when cut.
    if table.columnWidth(status) < table.sizeHintForColumn(status):
        assert table.columnWidth(path) < table.sizeHintForColumn(path)


def test_details_show_the_whole_error(window: MainWindow, qtbot: QtBot) -> None:
    window.resize(1024, 700)
    page = window.library_page
    page.refresh()
    broken = window.library.root / BROKEN
    page.select_path(broken)
    text = page.details.toPlainText()
    problem = next(e for e in page.library.scan() if e.path == broken).error
    assert problem is not None
    assert problem.problem in text and str(broken / "llm.mnn.weight") in text
    assert text.count("download or copy the pack again") == 1
