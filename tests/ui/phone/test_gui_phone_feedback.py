"""The Phone page keeps the user told: what a cancel did, what is on the phone while a
push runs, when recipes alone can go, and phones named by model. Real adb server, fake
phone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSize
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.phone.push import CANCELLED
from app.ui.shell.main_window import MainWindow
from tests.fake_phone import FakePhone
from tests.helpers.cli import run_cli
from tests.helpers.phone_window import ROOT, phone_window, start_slow_push, wait_done

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, phone: FakePhone, bundle_copy: Copy) -> Iterator[MainWindow]:
    with phone_window(qtbot, bundle_copy) as win:
        yield win


def test_a_push_shows_its_partial_folder_and_a_cancel_says_so(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    start_slow_push(window, phone)
    assert window.statusBar().currentMessage() == "Pushing fast-draft to Pixel 8"
    # No Refresh: the page re-reads the folder when the push starts sending.
    listed = page.packs_model
    qtbot.waitUntil(
        lambda: [(p.name, p.match) for p in listed.packs] == [("fast-draft.partial", "incomplete")],
        timeout=10_000,
    )
    queue = page.push_queue
    queue.view.selectRow(0)
    queue.cancel_button.click()
    qtbot.waitUntil(lambda: queue.model.status(0).state == CANCELLED, timeout=10_000)
    qtbot.waitUntil(lambda: "cancelled" in window.statusBar().currentMessage())
    said = window.statusBar().currentMessage()
    assert said.startswith("Push of fast-draft to Pixel 8 cancelled: ")
    assert "resumes" in said  # verified files stay; pushing again goes on from them
    qtbot.waitUntil(lambda: page.listed is not None, timeout=10_000)  # re-read after
    assert [p.name for p in listed.packs] == ["fast-draft.partial"]


def test_push_recipes_waits_for_the_pack_on_the_phone(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    page.pack_list.setCurrentRow(0)
    not_there = f"fast-draft is not on Pixel 8 in {ROOT}: push the whole pack once"
    qtbot.waitUntil(lambda: page.recipes_hint.text().startswith(not_there), timeout=10_000)
    assert not page.recipes_button.isEnabled() and page.recipes_hint.isVisible()
    assert page.recipes_button.toolTip() == page.recipes_hint.text()
    assert page.push_recipes_selected() is None  # the key and any caller: refused too
    assert page.push_queue.model.rowCount() == 0
    assert page.free_label.text().startswith(f"0 packs in {ROOT}")

    page.push_button.click()
    wait_done(qtbot, window, 0)
    qtbot.waitUntil(page.recipes_button.isEnabled, timeout=10_000)
    assert not page.recipes_hint.isVisible()
    assert page.free_label.text().startswith(f"1 pack in {ROOT} · ")  # not "1 packs"
    assert page.push_recipes_selected() is not None
    wait_done(qtbot, window, 1)


def test_the_note_that_comes_with_a_selection_leaves_push_pack_where_it_was(
    qtbot: QtBot, window: MainWindow
) -> None:
    page = window.phone_page

    def button_place() -> tuple[QPoint, QSize]:
        QApplication.sendPostedEvents()  # the layouts' pending requests, carried out
        return page.push_button.mapTo(window, QPoint(0, 0)), page.push_button.size()

    before = button_place()
    assert not page.recipes_hint.isVisible()
    page.pack_list.setCurrentRow(0)  # the pointer is on the list, about to go to the button
    qtbot.waitUntil(lambda: page.recipes_hint.isVisible(), timeout=10_000)
    assert page.recipes_hint.height() > 0
    assert button_place() == before


def test_a_failed_push_names_the_phone_by_model(
    tmp_path: Path, phone: FakePhone, bundle_copy: Copy
) -> None:
    pack = bundle_copy("fast-draft", tmp_path / "fast-draft")
    failed = run_cli("push", str(pack), "--recipe-only")
    assert failed.returncode == 1
    assert f"fast-draft is not on Pixel 8 in {ROOT}: push the whole pack" in failed.stderr
    assert phone.address not in failed.stderr
