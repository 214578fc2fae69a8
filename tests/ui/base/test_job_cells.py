"""Transfer figures against hand-computed truth: a fake clock and known byte counts
drive a job's speed and time left, and the queues' Speed/Left cells show them as
exact text. Nothing here depends on how fast the machine is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core.hub.hub_api import HubConfig
from app.core.hub.job import DOWNLOADING, DownloadJob, JobStatus
from app.core.infra.units import format_time_left as format_eta
from app.core.phone.push import PUSHING, PushStatus
from app.ui.downloads.download_models import QueueModel
from app.ui.phone.phone_models import PushQueueModel

KB, MB = 1024, 1024 * 1024


class FakeClock:
    """Seconds that move only when the test says so."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _job(tmp_path: Path, clock: FakeClock, total: int) -> DownloadJob:
    job = DownloadJob(
        "me/pack", tmp_path, HubConfig(endpoint="http://127.0.0.1:9", token=False), clock=clock
    )
    job._set(state=DOWNLOADING, total_bytes=total)
    return job


def test_speed_and_time_left_follow_the_clock_and_the_bytes(tmp_path: Path) -> None:
    clock = FakeClock(100.0)
    job = _job(tmp_path, clock, total=10_000)
    job._on_bytes(1_000)  # t = 100: one sample, no rate yet
    s = job.status()
    assert (s.done_bytes, s.speed, s.eta_seconds, s.fraction) == (1_000, 0.0, None, 0.1)

    clock.now = 101.0
    job._on_bytes(1_000)  # 1,000 B in 1 s; 8,000 B left
    s = job.status()
    assert (s.speed, s.eta_seconds, s.fraction) == (1_000.0, 8.0, 0.2)

    clock.now = 102.0
    job._on_bytes(3_000)  # 4,000 B in 2 s since t = 100; 5,000 B left
    s = job.status()
    assert (s.speed, s.eta_seconds, s.fraction) == (2_000.0, 2.5, 0.5)

    clock.now = 105.0
    job._on_bytes(1_000)  # the 3 s window keeps t = 102 on: 1,000 B in 3 s; 4,000 B left
    s = job.status()
    assert s.speed == pytest.approx(1_000 / 3)
    assert s.eta_seconds == pytest.approx(12.0)
    assert s.file_done == 6_000

    clock.now = 109.0
    job._on_bytes(0)  # a 4 s stall: no rate to show, so no time left either
    s = job.status()
    assert (s.speed, s.eta_seconds) == (0.0, None)

    clock.now = 110.0
    job._on_bytes(4_000)  # done: nothing left, no ETA
    s = job.status()
    assert (s.speed, s.eta_seconds, s.fraction) == (4_000.0, None, 1.0)


def test_format_eta_by_hand() -> None:
    assert format_eta(None) == ""
    assert format_eta(7.0) == "7 s"
    assert format_eta(12.4) == "12 s"
    assert format_eta(89.0) == "89 s"
    assert format_eta(120.0) == "2 min"
    assert format_eta(3_600.0) == "60 min"


def test_download_queue_cells_from_a_clocked_job(qapp: QApplication, tmp_path: Path) -> None:
    clock = FakeClock(0.0)
    job = _job(tmp_path, clock, total=11 * MB)
    job._on_bytes(0)
    clock.now = 2.0
    job._on_bytes(1 * MB)  # 1 MB in 2 s = 512 KB/s; 10 MB left = 20 s
    model = QueueModel()
    model.add_job(job)
    row = {
        column: model.data(model.index(0, i), Qt.ItemDataRole.DisplayRole)
        for i, column in enumerate(model.COLUMNS)
    }
    assert row["Speed"] == "512.0 KB/s"
    assert row["Left"] == "20 s"
    assert row["Size"] == "11.0 MB"
    assert row["Progress"] == "9%"  # 1 of 11 MB
    assert row["State"] == DOWNLOADING


def test_download_queue_cells_by_hand(qapp: QApplication) -> None:
    model = QueueModel()
    idle = JobStatus("me/pack", state=DOWNLOADING, done_bytes=0, total_bytes=600 * MB)
    assert model.cell(idle, "Speed") == "" and model.cell(idle, "Left") == ""
    going = JobStatus("me/pack", state=DOWNLOADING, done_bytes=0, total_bytes=600 * MB, speed=MB)
    assert model.cell(going, "Speed") == "1.0 MB/s"
    assert model.cell(going, "Left") == "10 min"  # 600 MB at 1 MB/s = 600 s


def test_push_queue_cells_by_hand(qapp: QApplication) -> None:
    model = PushQueueModel()
    status = PushStatus(
        "pack",
        "SERIAL1",
        "/sdcard/pack",
        False,
        state=PUSHING,
        done_bytes=3 * MB,
        total_bytes=8 * MB,
        speed=256 * KB,
    )
    assert model.cell(status, "Speed") == "256.0 KB/s"
    assert model.cell(status, "Left") == "20 s"  # 5 MB at 0.25 MB/s
    assert status.fraction == 0.375
    assert model.cell(replace(status, speed=0.0), "Left") == ""  # no rate yet: blank
    sending = replace(status, current_file="llm.mnn.weight", file_done=KB, file_size=2 * KB)
    assert model.cell(sending, "Details") == "llm.mnn.weight 1.0 KB / 2.0 KB"
    # Not sent yet (sizes unknown while hashing locally): no "checking" word.
    hashing = replace(status, current_file="llm.mnn.weight")
    assert model.cell(hashing, "Details") == "llm.mnn.weight"
    sent = replace(sending, file_done=2 * KB)
    assert model.cell(sent, "Details") == (
        "llm.mnn.weight 2.0 KB / 2.0 KB · checking sha256 on the phone"
    )


def test_queue_rows_follow_the_queue_list(qapp: QApplication, tmp_path: Path) -> None:
    clock = FakeClock()
    first, second = _job(tmp_path, clock, total=MB), _job(tmp_path, clock, total=2 * MB)
    model = QueueModel()
    assert [s.total_bytes for s in model.sync([first, second])] == [MB, 2 * MB]  # new rows
    assert model.sync([first, second]) == []  # nothing changed: nothing to report
    second._on_bytes(KB)
    assert [s.done_bytes for s in model.sync([first, second])] == [KB]
    assert model.sync([second]) == [] and model.jobs == [second]  # the first was cleared
    assert model.rowCount() == 1 and model.status(0).done_bytes == KB
