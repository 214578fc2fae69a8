"""The Library shows each pack's export check (export_check.json), offscreen with real
widgets: the Status column marks a pack whose export was not verified (also one added
with Add Folder) in the warning colour with what differs on hover, the details say the
verdict with its figures, and a pack never checked says nothing of it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from pytestqt.qtbot import QtBot

from app.core.pack.files import EXPORT_CHECK
from app.ui.base.scheme import colours
from app.ui.library.library_model import COLUMNS
from app.ui.shell.main_window import MainWindow
from tests.helpers.export_checks import record_check
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
STATUS = COLUMNS.index("Status")


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy, tmp_path: Path) -> Iterator[MainWindow]:
    """verified and never-checked packs in the library folder, one whose check file is
    broken, and a failed one added by reference (Add Folder) from elsewhere."""
    with open_window(qtbot) as win:
        root = add_packs(win, bundle_copy, ("qwen3-target", "fast-draft", "fast-target"))
        record_check(root / "fast-draft", faithful=0.9991, cost=0.9104)
        (root / "fast-target" / EXPORT_CHECK).write_text('{"verified": "yes"}', encoding="utf-8")
        failed = bundle_copy("qwen3-draft-noisy", tmp_path / "elsewhere" / "made-pack")
        record_check(failed, faithful=0.6, cost=0.5)
        win.library_page.refresh()
        said: list[str] = []
        win.library_page.message.connect(said.append)
        win.library_page.add_paths([failed])
        assert said == ["Added made-pack"]
        yield win


def _row(window: MainWindow, name: str) -> int:
    proxy = window.library_page.proxy
    return next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data() == name)


def _status(window: MainWindow, name: str, role: Qt.ItemDataRole) -> object:
    return window.library_page.proxy.index(_row(window, name), STATUS).data(role)


def _details(window: MainWindow, name: str) -> str:
    page = window.library_page
    page.table.selectRow(_row(window, name))
    return page.details.toPlainText()


def test_status_marks_a_pack_whose_export_was_not_verified(window: MainWindow) -> None:
    display, tip = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
    colour = Qt.ItemDataRole.ForegroundRole
    assert _status(window, "made-pack", display) == "Export not verified"
    warning = _status(window, "made-pack", colour)
    assert isinstance(warning, QBrush) and warning.color() == QColor(colours().error)
    said = str(_status(window, "made-pack", tip))
    assert said.startswith("Export not verified: Top-1 agreement with the quantized source")
    assert "first differs after token 3" in said

    assert _status(window, "fast-draft", display) == "OK, export verified"
    assert _status(window, "fast-draft", colour) is None
    assert _status(window, "qwen3-target", display) == "OK"
    assert _status(window, "qwen3-target", colour) is None

    assert _status(window, "fast-target", display) == "OK; export check unreadable"
    assert isinstance(_status(window, "fast-target", colour), QBrush)
    broken = window.library.root / "fast-target" / EXPORT_CHECK
    assert str(broken) in str(_status(window, "fast-target", tip))


def test_details_say_the_verdict_with_its_figures(window: MainWindow) -> None:
    verified = _details(window, "fast-draft")
    assert (
        "Export verified (faithful 0.999 top-1 against the quantized source, "
        "quantization cost 0.910)" in verified
    )
    failed = _details(window, "made-pack")
    assert "Export not verified: faithful 0.600 top-1 against the quantized source" in failed
    assert "prose: first differs after token 3 ('The capital of France is')" in failed
    assert "linked folder" in failed  # added by reference, kept where it is
    never = _details(window, "qwen3-target")
    assert "verified" not in never and "Export check" not in never
    unreadable = _details(window, "fast-target")
    assert "Export check unreadable:" in unreadable and '"verified"' in unreadable
    assert str(window.library.root / "fast-target" / EXPORT_CHECK) in unreadable


def test_the_count_and_the_filter_find_packs_not_verified(window: MainWindow, qtbot: QtBot) -> None:
    page = window.library_page
    said: list[str] = []
    page.message.connect(said.append)
    page.refresh()
    assert said[-1].endswith(", 2 exports not verified"), said
    page.filter_edit.setText("not verified")
    assert [page.proxy.index(r, 0).data() for r in range(page.proxy.rowCount())] == ["made-pack"]
