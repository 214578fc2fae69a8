"""The Phone page offscreen, against the real adb server and a fake phone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.infra.units import format_bytes
from app.ui.base.background import wait_for_background
from app.ui.shell.main_window import MainWindow
from tests.adb_harness import AdbServer
from tests.fake_phone import FakePhone
from tests.helpers.phone_window import ROOT, phone_window, start_slow_push, wait_done

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, phone: FakePhone, bundle_copy: Copy) -> Iterator[MainWindow]:
    with phone_window(qtbot, bundle_copy) as win:
        yield win


def test_devices_show_details_and_the_library_packs(window: MainWindow, phone: FakePhone) -> None:
    page = window.phone_page
    item = page.device_list.item(0)
    assert item.text().startswith("Pixel 8\nAndroid 15 · arm64-v8a")
    assert phone.address in item.toolTip()
    assert page.device_hint.text() == ""
    assert page.pack_list.item(0).text() == "fast-draft"
    assert page.destinations.combo.currentData() == ROOT
    assert not page.push_button.isEnabled()  # no pack chosen yet
    page.pack_list.setCurrentRow(0)
    assert page.push_button.isEnabled()


def test_push_then_list_then_delete(
    qtbot: QtBot, window: MainWindow, phone: FakePhone, qtmodeltester: object
) -> None:
    page = window.phone_page
    phone.free_bytes = 8 * 1024**3  # what the phone's df reports (less what we push)
    page.pack_list.setCurrentRow(0)
    page.push_button.click()
    wait_done(qtbot, window, 0)
    assert phone.local(f"{ROOT}/fast-draft/llm.mnn.weight").is_file()
    details = page.push_queue.model.index(0, page.push_queue.model.COLUMNS.index("Details")).data()
    assert "verified" in details and f"{ROOT}/fast-draft" in details
    qtbot.waitUntil(lambda: page.packs_model.rowCount() == 1, timeout=10_000)
    qtmodeltester.check(page.packs_model)  # type: ignore[attr-defined]
    qtmodeltester.check(page.push_queue.model)  # type: ignore[attr-defined]
    assert page.packs_model.packs[0].match == "same"
    assert "free" in page.free_label.text()
    assert f"{format_bytes(phone.free_bytes // 1024 * 1024)} free" in page.free_label.text()

    # Recipes only: nothing but the recipes travels, and the row says so.
    page.recipes_button.click()
    wait_done(qtbot, window, 1)
    assert page.push_queue.model.index(1, 0).data() == "fast-draft (recipes)"
    qtbot.waitUntil(lambda: page.packs_model.rowCount() == 1, timeout=10_000)  # re-read

    page.packs_view.selectRow(0)
    page.delete_button.click()
    box = page.findChild(QMessageBox, "confirmDialog")
    assert box is not None and "fast-draft" in box.text()
    delete = next(b for b in box.buttons() if b.text() == "Delete")
    delete.click()
    qtbot.waitUntil(lambda: page.packs_model.rowCount() == 0, timeout=10_000)
    assert not phone.local(f"{ROOT}/fast-draft").exists()


def test_dropping_a_pack_on_a_phone_pushes_it(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    mime = page.pack_list.mimeData([page.pack_list.item(0)])
    assert [u.toLocalFile() for u in mime.urls()] == [
        str(app_dirs().default_library / "fast-draft")
    ]
    view = page.device_list
    target = view.visualItemRect(view.item(0)).center()
    drop = QDropEvent(
        target.toPointF(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    # Offscreen there is no drag session for Qt to route a drop through, so the
    # view's handler gets the event directly.
    view.dropEvent(drop)
    assert drop.isAccepted()
    wait_done(qtbot, window, 0)
    assert phone.local(f"{ROOT}/fast-draft/config.json").is_file()

    # Something that is not a folder is not taken.
    other = QMimeData()
    other.setUrls([QUrl("https://example.invalid/pack")])
    refused = QDropEvent(
        QPoint(5, 5).toPointF(),
        Qt.DropAction.CopyAction,
        other,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    view.dropEvent(refused)
    assert not refused.isAccepted()
    assert page.push_queue.model.rowCount() == 1


def test_unplugged_phone_leaves_the_list_and_an_unauthorized_one_explains(
    qtbot: QtBot, window: MainWindow, phone: FakePhone, adb_server: AdbServer, tmp_path: Path
) -> None:
    page = window.phone_page
    adb_server.disconnect(phone)
    qtbot.waitUntil(lambda: page.device_list.count() == 0, timeout=10_000)
    assert "USB debugging" in page.device_hint.text()
    with FakePhone(tmp_path / "locked", authorized=False) as locked:
        adb_server.connect(locked, state="unauthorized")
        qtbot.waitUntil(lambda: page.device_list.count() == 1, timeout=10_000)
        assert "unauthorized" in page.device_list.item(0).text()
        assert "Allow USB debugging" in page.device_hint.text()
        page.pack_list.setCurrentRow(0)
        assert not page.push_button.isEnabled()


def test_a_pack_being_pushed_cannot_be_deleted_and_cancel_stops_it(
    qtbot: QtBot, window: MainWindow, phone: FakePhone, bundle_copy: Copy
) -> None:
    page = window.phone_page
    pack = start_slow_push(window, phone)
    model = page.push_queue.model
    qtbot.waitUntil(lambda: model.rowCount() == 1 and model.status(0).done_bytes > 0)
    page.refresh_phone()
    qtbot.waitUntil(lambda: page.packs_model.rowCount() == 1, timeout=10_000)
    assert page.packs_model.packs[0].name == "fast-draft.partial"
    assert page.packs_model.packs[0].match == "incomplete"

    page.packs_view.selectRow(0)
    page.delete_button.click()
    error = page.findChild(QMessageBox, "errorDialog")
    assert error is not None and "being pushed" in error.text()
    error.close()
    assert page.findChild(QMessageBox, "confirmDialog") is None

    page.push_queue.view.selectRow(0)
    page.push_queue.cancel_button.click()
    qtbot.waitUntil(lambda: model.status(0).state == "cancelled", timeout=10_000)
    assert "resumes" in model.index(0, model.COLUMNS.index("Details")).data()
    phone.throttle_bytes_per_s = None
    page.push_queue.retry_button.click()  # push again: resumes
    wait_done(qtbot, window, 0)
    assert (
        phone.local(f"{ROOT}/fast-draft/llm.mnn.weight").stat().st_size
        == (pack / "llm.mnn.weight").stat().st_size
    )


def test_f5_and_delete_act_on_the_phone_page_not_the_library(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    page = window.phone_page
    fired: list[str] = []

    def spy(action: QAction, where: str) -> None:
        label = f"{where} {action.text()}"
        action.triggered.connect(lambda *_args: fired.append(label))

    for action in page.actions():
        spy(action, "phone")
    library = window.library_page
    for action in (library.act_remove, library.act_refresh):
        spy(action, "library")
    page.packs_view.setFocus()
    QTest.keyClick(page.packs_view, Qt.Key.Key_F5)
    QTest.keyClick(page.packs_view, Qt.Key.Key_Delete)
    assert fired == ["phone Refresh", "phone Delete"]
    window.show_page("library")
    library.table.setFocus()
    QTest.keyClick(library.table, Qt.Key.Key_F5)
    assert fired[-1] == "library Re&fresh"


def test_the_page_queues_the_same_push_once_and_a_closed_page_hears_nothing(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    pack = app_dirs().default_library / "fast-draft"
    with (pack / "llm.mnn.weight").open("ab") as handle:
        handle.write(bytes(2 * 1024 * 1024))
    phone.throttle_bytes_per_s = 300_000  # a slow cable: the push is still on when pushed again
    page.pack_list.setCurrentRow(0)
    first = page.push_selected()
    assert first is not None and page.push_selected() is first  # the desk's rule
    assert page.push_queue.model.rowCount() == 1
    combo = page.destinations.combo
    combo.setCurrentIndex(combo.findData("/sdcard/Download/DraftDeck"))
    second = page.push_selected()  # another folder: another push
    assert second is not None and second is not first
    assert second.status().dest == "/sdcard/Download/DraftDeck/fast-draft"
    assert page.push_queue.model.rowCount() == 2

    window.show_page("library")
    assert not page.watch.timer.isActive()  # no polling while hidden
    window.show_page("phone")
    assert page.watch.timer.isActive()

    page.refresh_phone()
    window.shutdown()  # what the window's close does: answers on their way are dropped
    wait_for_background()
    qtbot.wait(200)
    assert page.packs_model.rowCount() == 0 and page.free_label.text().startswith("Reading")
    assert not page.watch.timer.isActive()
    assert first.is_finished()  # stopped; it resumes next time


def test_a_folder_draftdeck_did_not_make_is_not_deleted(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    stranger = phone.local(f"{ROOT}/someone-elses")
    stranger.mkdir(parents=True)
    (stranger / "config.json").write_text("{}")  # looks like a pack, has no marker
    page.refresh_phone()
    qtbot.waitUntil(lambda: page.packs_model.rowCount() == 1, timeout=10_000)
    assert not page.packs_model.packs[0].ours
    page.packs_view.selectRow(0)
    page.delete_button.click()
    error = page.findChild(QMessageBox, "errorDialog")
    assert error is not None and "did not make it" in error.text()
    error.close()
    assert page.findChild(QMessageBox, "confirmDialog") is None
    assert (stranger / "config.json").read_text() == "{}"


def test_push_queue_buttons_follow_the_selected_push(qtbot: QtBot, window: MainWindow) -> None:
    queue = window.phone_page.push_queue
    buttons = (queue.cancel_button, queue.retry_button, queue.clear_button)
    assert not any(b.isEnabled() for b in buttons)  # an empty queue offers nothing
    assert queue.retry_button.toolTip() == "Select a push in the queue first"
    window.phone_page.pack_list.setCurrentRow(0)
    window.phone_page.push_button.click()
    wait_done(qtbot, window, 0)
    qtbot.waitUntil(queue.clear_button.isEnabled, timeout=10_000)
    queue.view.clearSelection()  # the started push was selected for the user
    assert not queue.cancel_button.isEnabled() and not queue.retry_button.isEnabled()
    queue.view.selectRow(0)
    assert queue.retry_button.isEnabled() and not queue.cancel_button.isEnabled()
    assert queue.cancel_button.toolTip() == "This push is done"
    queue.clear_button.click()
    qtbot.waitUntil(lambda: queue.model.rowCount() == 0, timeout=10_000)
    assert not any(b.isEnabled() for b in buttons)


def test_quitting_stops_the_adb_server_only_if_draftdeck_started_it(
    qtbot: QtBot, window: MainWindow, adb_server: AdbServer
) -> None:
    # The tests' server was running before DraftDeck asked: quitting leaves it alone.
    assert not window.phone_page.desk.adb.started_server
    window.close()
    wait_for_background()
    assert adb_server.process.poll() is None and adb_server.state("no-such") is None
