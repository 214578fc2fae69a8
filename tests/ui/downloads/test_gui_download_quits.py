"""The Downloads page keeps the user informed across quits (issue 27 §3), offscreen
against the local Hub stand-in: quitting with a download under way asks first, the
next window lists it paused with Resume and Discard, Clear Finished keeps paused rows,
an installed and up-to-date pack offers Re-download and Verify instead of fetching it
again, and a typed repo the Hub does not have can be removed from the list."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.core.hub.downloads import PARTIAL
from app.core.hub.install import staging_dir
from app.core.hub.job import CANCELLED, DONE, PAUSED
from app.core.infra.settings import load_settings
from app.ui.base.background import wait_for_background
from app.ui.downloads.download_models import CatalogModel
from app.ui.downloads.downloads_page import DownloadsPage
from app.ui.shell.main_window import MainWindow
from tests.conftest import DRAFT_REPO
from tests.helpers.windows import open_window
from tests.hub_server import FakeHub

REPO = DRAFT_REPO
MISSING = "me/does-not-exist"


@pytest.fixture(autouse=True)
def local_hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    return hub


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        win.show_page("downloads")
        yield win


def _confirm_box(page: DownloadsPage) -> QMessageBox:
    boxes = page.findChildren(QMessageBox, "confirmDialog")
    (box,) = [b for b in boxes if b.isVisible()]  # a closed one awaits its deletion
    return box


def _press(box: QMessageBox, text: str) -> None:
    (button,) = [b for b in box.buttons() if b.text() == text]
    button.click()


def _mark(page: DownloadsPage, repo: str) -> str:
    row = next(i for i, e in enumerate(page.catalog_model.entries) if e.repo_id == repo)
    return str(page.catalog_model.index(row, CatalogModel.COLUMNS.index("Installed")).data())


def _mark_tooltip(page: DownloadsPage, repo: str) -> str:
    row = next(i for i, e in enumerate(page.catalog_model.entries) if e.repo_id == repo)
    index = page.catalog_model.index(row, CatalogModel.COLUMNS.index("Installed"))
    return str(index.data(Qt.ItemDataRole.ToolTipRole))


def _paused_by_quitting(qtbot: QtBot, hub: FakeHub) -> int:
    """Start a slow download, quit mid-way (asked first); the bytes that had arrived."""
    hub.throttle_bytes_per_s = 40_000
    win = open_window(qtbot)
    window = win.__enter__()
    page = window.downloads_page
    job = page.start_download(REPO)
    qtbot.waitUntil(lambda: job.status().done_bytes > 0, timeout=20_000)
    window.close()  # Ctrl+Q
    box = _confirm_box(page)
    assert "1 download is under way: " + REPO in box.text()
    assert "Resume goes on from what arrived" in box.text()
    assert window.isVisible() and window.current_page_key() == "downloads"
    _press(box, "Cancel")
    assert window.isVisible() and not job.is_finished()  # still downloading
    window.close()
    _press(_confirm_box(page), "Pause and Quit")
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10_000)
    assert job.status().state == PAUSED
    done = job.status().done_bytes
    win.__exit__(None, None, None)
    hub.throttle_bytes_per_s = None
    return done


def test_quit_asks_and_the_next_window_lists_the_download_paused_to_resume(
    qtbot: QtBot, hub: FakeHub
) -> None:
    arrived = _paused_by_quitting(qtbot, hub)
    with open_window(qtbot) as window:
        page = window.downloads_page
        window.show_page("downloads")
        assert page.queue_model.rowCount() == 1
        status = page.queue_model.status(0)
        assert status.repo_id == REPO and status.state == PAUSED
        assert status.done_bytes == arrived
        assert _mark(page, REPO) == PARTIAL  # the repo's row says a partial exists
        assert "Resume or Discard it in the queue" in _mark_tooltip(page, REPO)
        said = window.statusBar().currentMessage()
        assert (
            said == "1 download did not finish last time: paused in the queue (Resume or Discard)"
        )
        page.queue_view.selectRow(0)
        assert page.retry_button.isEnabled() and page.cancel_button.text() == "Discard"
        assert not page.clear_button.isEnabled()  # paused is not finished
        page.retry_button.click()
        qtbot.waitUntil(lambda: page.queue_model.status(0).state == DONE, timeout=30_000)
        qtbot.waitUntil(lambda: _mark(page, REPO) == "installed", timeout=10_000)


def test_discard_of_an_interrupted_download_removes_its_files(qtbot: QtBot, hub: FakeHub) -> None:
    _paused_by_quitting(qtbot, hub)
    with open_window(qtbot) as window:
        page = window.downloads_page
        root = window.library.root
        assert staging_dir(root, REPO).is_dir()
        page.queue_view.selectRow(0)
        page.clear_button.click()  # disabled: nothing happens, the row stays
        assert page.queue_model.rowCount() == 1
        page.cancel_button.click()  # Discard
        qtbot.waitUntil(lambda: page.queue_model.status(0).state == CANCELLED, timeout=10_000)
        assert not staging_dir(root, REPO).exists()
        assert page.cancel_button.text() == "Cancel" and not page.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: _mark(page, REPO) == "", timeout=10_000)
        page.clear_button.click()
        assert page.queue_model.rowCount() == 0


def test_clear_finished_keeps_a_paused_download(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    page = window.downloads_page
    failed = page.start_download("nobody/nothing")
    qtbot.waitUntil(lambda: failed.is_finished(), timeout=20_000)
    hub.throttle_bytes_per_s = 40_000
    job = page.start_download(REPO)
    qtbot.waitUntil(lambda: job.status().done_bytes > 0, timeout=20_000)
    page.queue_view.selectRow(1)
    page.pause_button.click()
    qtbot.waitUntil(lambda: page.queue_model.status(1).state == PAUSED, timeout=20_000)
    qtbot.waitUntil(page.clear_button.isEnabled, timeout=10_000)  # the failed one
    page.clear_button.click()
    qtbot.waitUntil(lambda: page.queue_model.rowCount() == 1, timeout=10_000)
    assert page.queue_model.jobs == [job]
    assert staging_dir(window.library.root, REPO).is_dir()
    assert not page.clear_button.isEnabled()
    assert "a paused one stays until resumed or discarded" in page.clear_button.toolTip()


def test_an_installed_up_to_date_pack_offers_re_download_and_verify(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    page = window.downloads_page
    page.select_repo(REPO)
    qtbot.waitUntil(page.download_button.isEnabled, timeout=10_000)
    assert page.download_button.text() == "Download" and not page.verify_button.isEnabled()
    page.download_button.click()
    qtbot.waitUntil(lambda: page.queue_model.status(0).state == DONE, timeout=30_000)
    # The pane reads the repo again: installed, at the Hub's revision.
    qtbot.waitUntil(lambda: "Installed and up to date" in page.details.toPlainText())
    qtbot.waitUntil(page.download_button.isEnabled, timeout=10_000)
    assert page.download_button.text() == "Re-download"
    assert page.verify_button.isEnabled()
    page.verify_button.click()
    qtbot.waitUntil(lambda: "Verified:" in page.details.toPlainText(), timeout=20_000)
    assert "All 7 files match the Hub's" in page.details.toPlainText()
    assert window.statusBar().currentMessage() == f"{REPO}: All 7 files match the Hub's"
    hub.reset_counters()
    page.download_button.click()  # Re-download: asked for, so everything again
    qtbot.waitUntil(lambda: page.queue_model.status(1).state == DONE, timeout=30_000)
    assert hub.bytes_served["llm.mnn.weight"] == hub.file(REPO, "llm.mnn.weight").size


def test_a_typed_repo_the_hub_does_not_have_can_be_removed(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.downloads_page
    page.select_repo(REPO)
    assert not page.remove_button.isEnabled()  # curated: not the user's to remove
    page.add_edit.setText(MISSING)
    page.add_button.click()
    qtbot.waitUntil(lambda: "Cannot list the files" in page.details.toPlainText(), timeout=20_000)
    text = page.details.toPlainText()
    assert "repository not found" in text and "Remove from List" in text
    assert page.remove_button.isEnabled()
    page.remove_button.click()
    assert MISSING not in [e.repo_id for e in page.catalog_model.entries]
    assert load_settings().extra_repos == []  # gone after a restart too
    assert window.statusBar().currentMessage() == f"Removed {MISSING} from the list"
    assert page.selected_entry() is None and not page.remove_button.isEnabled()
    wait_for_background()
