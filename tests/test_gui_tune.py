"""The Tune page offscreen: a real sweep on the fixture fast pair."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.ui.application import create_main_window
from app.ui.background import wait_for_background
from app.ui.main_window import MainWindow

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    win = create_main_window()
    root = win.library.root
    for name in ("fast-target", "fast-draft"):
        bundle_copy(name, root / name, desktop=True)
    qtbot.addWidget(win)
    win.show()
    win.show_page("pair")
    win.pair_page.choose(root / "fast-target", root / "fast-draft")
    win.show_page("tune")
    yield win
    win.tune_page._cancel.set()
    wait_for_background(60_000)
    win.close()


def _sweep(qtbot: QtBot, window: MainWindow, tokens: int = 48) -> None:
    page = window.tune_page
    page.tokens.setValue(tokens)
    page.prompts.setPlainText("Tell me about rivers.\n\ndef add(a, b):")
    page.start_button.click()
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=120_000)


def test_quick_sweep_finds_the_gain_and_applies_it(
    window: MainWindow, qtbot: QtBot, qtmodeltester: object
) -> None:
    page = window.tune_page
    assert (page.d_min.value(), page.d_max.value()) == (1, 4)
    _sweep(qtbot, window)
    qtmodeltester.check(page.model)  # type: ignore[attr-defined]
    assert page.model.rowCount() == 4
    assert "pays off" in page.verdict.text()
    assert page.progress.value() == page.progress.maximum()
    best = page.model.best
    assert best is not None and best.uplift > 1.0
    row = page.model.results.index(best)
    assert page.model.index(row, 0).data(Qt.ItemDataRole.FontRole).bold()
    target = window.library.root / "fast-target" / "config.json"
    before = target.read_text()
    page.apply_button.click()
    assert json.loads(target.read_text())["draft_predict_length"] == best.setting.draft_length
    # The Recipes page shows the applied values next time it is opened.
    window.show_page("recipes")
    target_form = window.recipes_page.target_editor
    assert target_form.data["draft_predict_length"] == best.setting.draft_length
    window.show_page("tune")
    page.undo_button.click()
    assert json.loads(target.read_text()) == json.loads(before)
    # The run was saved and can be reopened.
    assert page.past.count() == 1
    page.model.set_results([])
    page.open_selected()
    assert page.model.rowCount() == 4


def test_cancel_keeps_partial_results(window: MainWindow, qtbot: QtBot) -> None:
    page = window.tune_page
    page.d_max.setValue(8)
    page.tokens.setValue(48)
    page.prompts.setPlainText("Tell me about rivers.")
    page.start_button.click()
    qtbot.waitUntil(lambda: page.model.rowCount() >= 1, timeout=60_000)
    page.cancel_button.click()
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=60_000)
    assert 1 <= page.model.rowCount() < 8
    assert "cancelled" in page.verdict.text()
