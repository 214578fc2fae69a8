"""Measure Pack's bar (PackMeasureJob.fraction): a target counts whole only once it is
measured, so the bar reaches its end when the work does, not when a tune's last pair
is done while that target's verify agreement is still being measured (#36 item 4)."""

from __future__ import annotations

from pathlib import Path

from app.engine.client.pack_measure import MeasureOptions
from app.engine.client.pack_measure_job import (
    MeasureState,
    PackMeasureJob,
    PackMeasureStatus,
)
from tests.helpers.tune_results import fast_target_measurement

MEASURING, DONE = MeasureState.MEASURING, MeasureState.DONE


def _job(targets: int) -> PackMeasureJob:
    # The engine is never opened: fraction reads only the statuses it is given.
    return PackMeasureJob(
        Path("draft"), [Path(f"target-{i}") for i in range(targets)], MeasureOptions()
    )


def test_the_bar_ends_only_when_every_target_is_measured() -> None:
    job = _job(2)
    one = (fast_target_measurement(Path("packs/draft")),)
    under_way = [
        PackMeasureStatus(MEASURING),
        PackMeasureStatus(MEASURING, 0, 5, 10),
        PackMeasureStatus(MEASURING, 0, 10, 10),  # last pair done, agreement still measured
        PackMeasureStatus(MEASURING, 1, 0, 0, one),
        PackMeasureStatus(MEASURING, 1, 12, 12, one),  # a Quick tune's total shrank to done
    ]
    shown = [job.fraction(status) for status in under_way]
    assert shown == sorted(shown)  # forward only through these steps
    assert shown[0] == 0.0 and shown[1] == 0.25 and shown[3] == 0.5
    assert all(f < 1.0 for f in shown)  # 100 % is never shown while work goes on
    assert shown[2] < 0.5 and shown[4] < 1.0
    assert job.fraction(PackMeasureStatus(DONE, 1, 12, 12, one * 2)) == 1.0


def test_a_stopped_measuring_shows_what_it_measured() -> None:
    job = _job(4)
    one = (fast_target_measurement(Path("packs/draft")),)
    for state in (MeasureState.CANCELLED, MeasureState.FAILED):
        # The target under way is not counted in part once the job has ended.
        assert job.fraction(PackMeasureStatus(state, 1, 7, 10, one)) == 0.25
