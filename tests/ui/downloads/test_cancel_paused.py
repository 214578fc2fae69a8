"""Cancelling a download that was paused first: it ends cancelled, in the service and on
the Downloads page, whose buttons follow (issue #20)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.hub.downloads import Downloads
from app.core.hub.install import staging_dir
from app.core.hub.job import CANCELLED, DONE, PAUSED
from app.core.phone.adb import Adb
from app.core.phone.push import CANCELLED as PUSH_CANCELLED
from app.core.phone.push import FINISHED as PUSH_FINISHED
from app.core.phone.push import PushJob
from app.ui.downloads.download_models import QueueModel
from app.ui.shell.main_window import MainWindow
from tests.conftest import DRAFT_REPO
from tests.fake_phone import FakePhone
from tests.hub_server import FakeHub

REPO = DRAFT_REPO


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed limit
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_service_cancel_of_a_paused_download_ends_it_cancelled(
    downloads: Downloads, hub: FakeHub
) -> None:
    hub.throttle_bytes_per_s = 50_000
    job = downloads.start(REPO)
    _wait_for(lambda: job.status().done_bytes > 0)
    downloads.pause(job)
    downloads.queue.wait(job, timeout=60)
    assert job.status().state == PAUSED
    assert staging_dir(downloads.root, REPO).exists()  # kept for a resume
    changes: list[str] = []
    unsubscribe = downloads.queue.subscribe(lambda: changes.append(job.status().state))
    downloads.cancel(job)
    unsubscribe()
    assert job.status().state == CANCELLED and job.status().speed == 0.0
    assert changes and changes[-1] == CANCELLED  # watchers were told
    assert not staging_dir(downloads.root, REPO).exists()
    assert not downloads.queue.active()
    hub.throttle_bytes_per_s = None
    assert downloads.resume(job)  # a cancelled download may start over
    downloads.queue.wait(job, timeout=60)
    assert job.status().state == DONE, job.status().error


def test_page_row_and_buttons_after_cancelling_a_paused_download(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    page = window.downloads_page
    model = page.queue_model
    hub.throttle_bytes_per_s = 50_000
    page.start_download(REPO)
    qtbot.waitUntil(lambda: model.rowCount() == 1 and model.status(0).done_bytes > 0)
    page.queue_view.selectRow(0)
    page.pause_button.click()
    qtbot.waitUntil(lambda: model.status(0).state == PAUSED, timeout=20_000)
    qtbot.waitUntil(page.retry_button.isEnabled, timeout=10_000)
    assert page.cancel_button.isEnabled()
    assert window.statusBar().currentMessage() == f"Paused {REPO}; Resume continues it"
    page.cancel_button.click()
    state = model.index(0, QueueModel.COLUMNS.index("State"))
    qtbot.waitUntil(lambda: state.data() == CANCELLED, timeout=10_000)
    qtbot.waitUntil(lambda: not page.cancel_button.isEnabled(), timeout=10_000)
    assert page.cancel_button.toolTip() == "This download is cancelled"
    assert not page.pause_button.isEnabled()
    # Its files are gone: nothing to resume; the repo's Download starts it again.
    assert not page.retry_button.isEnabled() and page.clear_button.isEnabled()
    assert "Download starts it again" in page.retry_button.toolTip()
    assert not staging_dir(window.library.root, REPO).exists()
    assert model.index(0, QueueModel.COLUMNS.index("Details")).data() == ""
    said = window.statusBar().currentMessage()
    assert said == f"Cancelled {REPO}; the files that arrived were deleted"


def test_push_paused_then_cancelled_ends_cancelled(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    """A push has no paused state: pause stops it as cancelled (resumable), and a
    cancel afterwards leaves it so, finished."""
    pack = bundle_copy("fast-draft", tmp_path / "library" / "fast-draft")

    class PauseMidWeight(PushJob):
        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            if self.status().current_file == "llm.mnn.weight":
                self.pause()

    job = PauseMidWeight(Adb(), phone.address, pack, "/data/local/tmp/mnn_models")
    assert job.run().state == PUSH_CANCELLED
    job.cancel()
    assert job.status().state == PUSH_CANCELLED and PUSH_CANCELLED in PUSH_FINISHED
    assert job.is_finished()
