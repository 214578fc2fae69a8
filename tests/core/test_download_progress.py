"""Progress and pause between small reads on a slow link (issue 27: at 40 KB/s a 624 KB
file showed "0 B" until it was done, and Pause took seconds to land).

No timing: the Hub stand-in's throttle makes the server send small pieces, and a clock
that moves on at every look stands for time passing between them; the tests count
reports and bytes.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.install import staging_dir
from app.core.hub.job import DONE, PAUSED, DownloadJob
from app.core.hub.transfer import CHUNK, REPORT_EVERY, DownloadCancelled, download_file
from app.core.infra.settings import load_settings
from tests.conftest import DRAFT_REPO
from tests.hub_server import FakeHub

WEIGHT = "llm.mnn.weight"  # 264,522 bytes: much less than one CHUNK
SLOW = 40_000  # bytes per second: the server writes 4,000-byte pieces


def _ticking_clock() -> itertools.count[float]:
    """A clock for which REPORT_EVERY passes between any two looks."""
    return itertools.count(0.0, REPORT_EVERY)


def _config(hub: FakeHub) -> HubConfig:
    return HubConfig(endpoint=hub.endpoint, token=False)


def test_bytes_are_reported_as_they_arrive_not_per_chunk(hub: FakeHub, tmp_path: Path) -> None:
    hub.throttle_bytes_per_s = SLOW * 5  # small pieces, and a quicker test
    plan = fetch_plan(_config(hub), DRAFT_REPO)
    weight = next(f for f in plan.files if f.path == WEIGHT)
    assert weight.size < CHUNK
    reports: list[int] = []
    clock = _ticking_clock()
    part = tmp_path / (WEIGHT + ".part")
    download_file(
        _config(hub),
        DRAFT_REPO,
        plan.revision,
        weight,
        part,
        reports.append,
        lambda: False,
        lambda: next(clock),
    )
    assert sum(reports) == weight.size == part.stat().st_size
    # Before: one report of the whole file once it was all there.
    assert len(reports) > 10 and max(reports) < weight.size // 4


def test_pause_lands_between_two_small_reads(hub: FakeHub, tmp_path: Path) -> None:
    hub.throttle_bytes_per_s = SLOW
    plan = fetch_plan(_config(hub), DRAFT_REPO)
    weight = next(f for f in plan.files if f.path == WEIGHT)
    reports: list[int] = []
    clock = _ticking_clock()
    part = tmp_path / (WEIGHT + ".part")
    try:
        download_file(
            _config(hub),
            DRAFT_REPO,
            plan.revision,
            weight,
            part,
            reports.append,
            lambda: bool(reports),  # paused as soon as the first bytes showed
            lambda: next(clock),
        )
    except DownloadCancelled:
        pass
    else:
        raise AssertionError("the pause was not honoured before the file was complete")
    # What arrived is on disk for a resume, and it is what was reported.
    assert 0 < part.stat().st_size == sum(reports) < weight.size // 4


def test_a_job_paused_at_its_first_bytes_stops_within_the_weight(
    hub: FakeHub, draftdeck_home: Path
) -> None:
    hub.throttle_bytes_per_s = SLOW
    library = load_settings().library_path()
    clock = _ticking_clock()

    class PauseAtFirstWeightBytes(DownloadJob):
        paused_once = False

        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            if self.status().current_file == WEIGHT and not self.paused_once:
                self.paused_once = True
                self.pause()

    job = PauseAtFirstWeightBytes(DRAFT_REPO, library, _config(hub), clock=lambda: next(clock))
    status = job.run()
    assert status.state == PAUSED
    part = staging_dir(library, DRAFT_REPO) / "files" / (WEIGHT + ".part")
    assert 0 < part.stat().st_size == status.file_done < hub.file(DRAFT_REPO, WEIGHT).size // 4
    hub.throttle_bytes_per_s = None
    job.restart()
    assert job.run().state == DONE
