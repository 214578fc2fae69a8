"""What the Downloads and Phone queues show while a job runs: the started job is
selected so its buttons apply, the figures agree (no "0 s" while bytes remain, a push
reports speed and time left), the catalog fits 1024 px, and phones go by their model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.hub.hub_api import HubConfig
from app.core.hub.job import DOWNLOADING, DownloadJob
from app.core.infra.paths import app_dirs
from app.core.infra.units import format_time_left as format_eta
from app.core.phone.push import PUSHING
from app.ui.downloads.download_models import CatalogModel, QueueModel
from app.ui.shell.main_window import MainWindow
from tests.adb_harness import AdbServer
from tests.conftest import DRAFT_REPO
from tests.fake_phone import FakePhone
from tests.helpers.windows import open_window
from tests.hub_server import FakeHub
from tests.ui.base.test_job_cells import FakeClock

OTHER_REPO = "me/other-pack"


@pytest.fixture
def window(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, hub: FakeHub) -> Iterator[MainWindow]:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    with open_window(qtbot) as win:
        yield win


def _cell(model: QueueModel, row: int, column: str) -> str:
    return str(model.index(row, model.COLUMNS.index(column)).data())


def test_reports_further_apart_than_the_window_still_give_a_rate(tmp_path: Path) -> None:
    clock = FakeClock(0.0)
    job = DownloadJob(
        "me/pack", tmp_path, HubConfig(endpoint="http://127.0.0.1:9", token=False), clock=clock
    )
    job._set(state=DOWNLOADING, total_bytes=1_000_000)
    job._on_bytes(262_144)  # one big block over a slow cable
    clock.now = 5.0
    job._on_bytes(262_144)  # the next, 5 s later (the window is 3 s)
    status = job.status()
    assert status.speed == pytest.approx(262_144 / 5)
    assert status.eta_seconds == pytest.approx((1_000_000 - 524_288) / (262_144 / 5))


def test_time_left_is_never_zero_while_bytes_remain(qapp: QApplication, tmp_path: Path) -> None:
    assert format_eta(0.35) == "1 s"  # what showed "0 s" beside a file still to fetch
    assert format_eta(None) == ""  # unknown: blank
    clock = FakeClock(0.0)
    job = DownloadJob(
        "me/pack", tmp_path, HubConfig(endpoint="http://127.0.0.1:9", token=False), clock=clock
    )
    job._set(state=DOWNLOADING, total_bytes=339_500)
    job._on_bytes(0)
    clock.now = 2.8
    job._on_bytes(302_000)  # 89 %, 37.5 KB left at about 108 KB/s
    model = QueueModel()
    model.add_job(job)
    assert _cell(model, 0, "Progress") == "89%"
    assert _cell(model, 0, "Left") == "1 s"


def test_a_started_download_is_selected_unless_the_user_chose_another(
    window: MainWindow, qtbot: QtBot, hub: FakeHub, fixture_bundle: Callable[[str], Path]
) -> None:
    page = window.downloads_page
    window.show_page("downloads")
    hub.add_folder(OTHER_REPO, fixture_bundle("fast-draft"))
    hub.throttle_bytes_per_s = 40_000  # both stay under way while the test looks
    first = page.start_download(DRAFT_REPO)
    assert page.queue_model.selected_job(page.queue_view) is first
    assert page.pause_button.isEnabled() and page.cancel_button.isEnabled()
    assert page.pause_button.toolTip().startswith("Stop after the current chunk")
    # The selection was not the user's choice: it moves on to the newest download.
    second = page.start_download(OTHER_REPO)
    assert page.queue_model.selected_job(page.queue_view) is second
    page.queue_view.selectRow(0)  # the user's own choice stays
    assert page.start_download(OTHER_REPO) is second  # already under way
    assert page.queue_model.selected_job(page.queue_view) is first
    page.queue_view.clearSelection()
    page.start_download(OTHER_REPO)
    assert page.queue_model.selected_job(page.queue_view) is second
    hub.throttle_bytes_per_s = None
    page.downloads.shutdown(timeout=2.0)


def test_the_catalog_fits_1024_px_and_the_details_say_what_to_do(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.downloads_page
    window.show_page("downloads")
    view, header = page.catalog_view, page.catalog_view.horizontalHeader()
    installed = CatalogModel.COLUMNS.index("Installed")
    qtbot.waitUntil(lambda: view.viewport().width() > 0)
    qtbot.waitUntil(lambda: header.sectionSize(installed) >= header.sectionSizeHint(installed))
    # A fitted table measures one column per turn of the event loop, then fits them all.
    qtbot.waitUntil(lambda: not view.measuring())
    qtbot.waitUntil(lambda: view.horizontalScrollBar().maximum() == 0)  # no sideways scroll
    repo = page.catalog_proxy.index(0, 0)
    assert str(repo.data()) in str(repo.data(Qt.ItemDataRole.ToolTipRole))  # elided: hover
    assert page.details.toPlainText() == ""
    assert page.details.placeholderText() == "Select a repository to see its files and sizes."


@pytest.fixture
def phone_window(
    qtbot: QtBot, phone: FakePhone, bundle_copy: Callable[..., Path], window: MainWindow
) -> MainWindow:
    bundle_copy("fast-draft", app_dirs().default_library / "fast-draft")
    window.show_page("phone")  # reads the library and the phones
    page = window.phone_page
    qtbot.waitUntil(lambda: page.device_list.count() == 1, timeout=10_000)
    qtbot.waitUntil(lambda: page.pack_list.count() == 1, timeout=10_000)
    return window


def test_a_started_push_is_selected_and_its_phone_named_by_model(
    phone_window: MainWindow, qtbot: QtBot, phone: FakePhone
) -> None:
    page = phone_window.phone_page
    said: list[str] = []
    page.message.connect(said.append)
    phone.throttle_bytes_per_s = 100_000  # under way while the test looks
    job = page.start_push(phone.address, app_dirs().default_library / "fast-draft", False)
    queue = page.push_queue
    assert queue.model.selected_job(queue.view) is job
    assert queue.cancel_button.isEnabled()
    phone_cell = queue.model.index(0, queue.model.COLUMNS.index("Phone"))
    assert phone_cell.data() == "Pixel 8"
    assert phone_cell.data(Qt.ItemDataRole.ToolTipRole) == f"adb address {phone.address}"
    assert said[0] == "Pushing fast-draft to Pixel 8"
    phone.throttle_bytes_per_s = None
    qtbot.waitUntil(lambda: queue.model.status(0).state == "done", timeout=20_000)
    assert said[-1].startswith("fast-draft is on Pixel 8: ") and phone.address not in said[-1]


def test_a_push_over_a_slow_cable_reports_speed_and_time_left(
    phone_window: MainWindow, qtbot: QtBot, phone: FakePhone
) -> None:
    page = phone_window.phone_page
    pack = app_dirs().default_library / "fast-draft"
    first = page.start_push(phone.address, pack, False)
    qtbot.waitUntil(first.is_finished, timeout=20_000)
    # Only the grown weight file travels again: one 256 KiB block every few seconds,
    # further apart than the speed window.
    with (pack / "llm.mnn.weight").open("ab") as handle:
        handle.write(bytes(600_000))
    phone.throttle_bytes_per_s = 70_000
    job = page.start_push(phone.address, pack, False)
    model = page.push_queue.model
    row = model.jobs.index(job)

    def figures_shown() -> bool:
        status = model.status(row)
        left = status.total_bytes - status.done_bytes
        return status.state == PUSHING and status.speed > 0 and left > 0

    qtbot.waitUntil(figures_shown, timeout=30_000)
    speed = str(model.index(row, model.COLUMNS.index("Speed")).data())
    left = str(model.index(row, model.COLUMNS.index("Left")).data())
    assert speed.endswith("/s") and left.endswith((" s", " min")) and left != "0 s"
    job.cancel()
    phone.throttle_bytes_per_s = None
    qtbot.waitUntil(job.is_finished, timeout=20_000)


def test_an_unauthorized_phone_says_what_to_do_where_it_is_listed(
    phone_window: MainWindow, qtbot: QtBot, adb_server: AdbServer, tmp_path: Path
) -> None:
    page = phone_window.phone_page
    with FakePhone(tmp_path / "locked", authorized=False) as locked:
        adb_server.connect(locked, state="unauthorized")
        qtbot.waitUntil(lambda: page.device_list.count() == 2, timeout=10_000)
        row = next(
            page.device_list.item(r)
            for r in range(page.device_list.count())
            if "unauthorized" in page.device_list.item(r).text()
        )
        assert "Unlock the phone and accept “Allow USB debugging?”" in row.text()
