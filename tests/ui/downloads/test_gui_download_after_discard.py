"""What the Downloads page shows around a download's life (issue 27, second walk): a
discarded download offers nothing to resume and draws no bar; Download is not offered
again for a repo under way; the quit question gives the figure the row shows; the
percentage is readable over the bar; a download listed after a restart says its bytes."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect
from PySide6.QtGui import QColor, QImage, QPainter, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QMessageBox, QStyleOptionViewItem, QTableView
from pytestqt.qtbot import QtBot

from app.core.hub.job import CANCELLED, PAUSED, JobStatus
from app.ui.base.job_models import FRACTION_ROLE, ProgressDelegate
from app.ui.downloads.download_models import QueueModel
from app.ui.shell.main_window import MainWindow
from tests.conftest import DRAFT_REPO
from tests.helpers.plan_rows import shown_files
from tests.hub_server import FakeHub

REPO = DRAFT_REPO
PROGRESS = QueueModel.COLUMNS.index("Progress")


def _visible_box(window: MainWindow) -> QMessageBox:
    boxes = window.downloads_page.findChildren(QMessageBox, "confirmDialog")
    (box,) = [b for b in boxes if b.isVisible()]
    return box


def test_a_discarded_download_offers_no_resume_and_no_bar(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    page = window.downloads_page
    hub.throttle_bytes_per_s = 40_000
    page.select_repo(REPO)
    qtbot.waitUntil(lambda: "llm.mnn.weight" in shown_files(page.files_model), timeout=10_000)
    assert page.download_button.isEnabled()
    job = page.start_download(REPO)
    qtbot.waitUntil(lambda: page.queue_model.status(0).done_bytes > 0, timeout=20_000)
    # Under way: Download says so instead of offering the same download again.
    qtbot.waitUntil(lambda: not page.download_button.isEnabled(), timeout=10_000)
    assert "Downloading now" in page.download_button.toolTip()
    # The quit question and the row give one figure, read at one moment.
    window.close()
    box = _visible_box(window)
    shown = page.queue_model.index(0, PROGRESS).data()
    assert f"{REPO} ({shown})" in box.text()
    assert "Pause it and quit?" in box.text() and "Quit anyway" not in box.text()
    next(b for b in box.buttons() if b.text() == "Cancel").click()
    page.queue_view.selectRow(0)
    page.pause_button.click()
    qtbot.waitUntil(lambda: page.queue_model.status(0).state == PAUSED, timeout=20_000)
    page.cancel_button.click()  # Discard
    qtbot.waitUntil(lambda: page.queue_model.status(0).state == CANCELLED, timeout=20_000)
    assert job.status().state == CANCELLED
    index = page.queue_model.index(0, PROGRESS)
    assert index.data() is None and index.data(FRACTION_ROLE) is None  # no 32 % bar
    assert not page.retry_button.isEnabled() and not page.pause_button.isEnabled()
    assert "cancelled" in page.retry_button.toolTip()
    qtbot.waitUntil(page.download_button.isEnabled, timeout=10_000)  # it may start again


def test_a_restored_download_says_its_bytes() -> None:
    mib = 1024 * 1024
    status = JobStatus(
        REPO, state=PAUSED, files_done=2, files_total=5, done_bytes=mib, total_bytes=3 * mib
    )
    details = QueueModel().cell(status, "Details")
    assert details.startswith("file 3 of 5") and "1.0 MB of 3.0 MB arrived" in details


def test_the_percentage_sits_on_the_view_background(qtbot: QtBot) -> None:
    view = QTableView()
    qtbot.addWidget(view)
    model = QStandardItemModel(1, 1)
    item = QStandardItem()
    item.setData(0.9, FRACTION_ROLE)
    model.setItem(0, 0, item)
    option = QStyleOptionViewItem()
    option.initFrom(view)
    option.rect = QRect(0, 0, 120, 30)
    image = QImage(120, 30, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    index: QModelIndex = model.index(0, 0)
    ProgressDelegate(view).paint(painter, option, index)
    painter.end()
    # The plate's edge, just left of the text: on a 90 % bar it lay on the filled chunk.
    bar = option.rect.adjusted(2, 3, -2, -3)
    plate = QRect(0, 0, option.fontMetrics.horizontalAdvance("90%") + 4, 1)
    plate.moveCenter(bar.center())
    pixel = image.pixelColor(plate.left(), bar.center().y())
    assert pixel == option.palette.base().color()
