"""One measurement at a time across processes: a second DraftDeck process holds the
measurement lock (tests/helpers/hold_measure_lock.py), and each measuring command, and
the window's jobs, are refused while it does; a lock whose holder died is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.core.measure.measure_lock import HOLDER_FILE, lock_path, measuring, measuring_elsewhere
from app.core.measure.tune_plan import plan_for, recipe_defaults
from app.engine.client.pack_measure import MeasureOptions
from app.engine.client.pack_measure_job import MeasureState, PackMeasureJob
from app.engine.client.tune_job import FAILED, TuneJob
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
HOLDER = "draftdeck tune (the other one)"


def _hold() -> subprocess.Popen[str]:
    """A process holding the lock; it lets go when its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.hold_measure_lock", HOLDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _let_go(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    holder.wait(timeout=60)
    holder.stdout.close()


@pytest.fixture
def holder(draftdeck_home: Path) -> Iterator[subprocess.Popen[str]]:
    process = _hold()
    yield process
    _let_go(process)


def _refusal(holder: subprocess.Popen[str]) -> str:
    return f"another DraftDeck is measuring (pid {holder.pid}, since "


@pytest.mark.parametrize("command", ["tune", "measure-pack", "bench"])
def test_a_measuring_command_is_refused_while_another_process_measures(
    holder: subprocess.Popen[str], bundle_copy: Copy, command: str
) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    args = {
        "tune": ["tune", "--target", str(target), "--draft", str(draft)],
        "measure-pack": ["measure-pack", str(draft), "--target", str(target)],
        "bench": ["bench", "--target", str(target), "--draft", str(draft), "--runs", "1"],
    }[command]
    proc = run_cli(*args, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert _refusal(holder) in proc.stderr and HOLDER in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (draft / "runtime_config.json").exists()  # measure-pack wrote nothing


def test_the_windows_jobs_are_refused_while_another_process_measures(
    holder: subprocess.Popen[str], bundle_copy: Copy
) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    assert measuring_elsewhere().startswith(_refusal(holder))  # what the pages say first
    measured = PackMeasureJob(draft, [target], MeasureOptions(quick=True)).run()
    assert measured.state == MeasureState.FAILED and _refusal(holder) in measured.error
    plan = plan_for("quick", recipe_defaults(target, draft))
    tuned = TuneJob(target, draft, plan).run()
    assert tuned.state == FAILED and _refusal(holder) in tuned.error


def test_a_lock_whose_holder_died_is_taken_over(draftdeck_home: Path) -> None:
    holder = _hold()
    assert measuring_elsewhere() != ""
    holder.send_signal(signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
    _let_go(holder)
    # Its record is left behind (it never let go), but the OS let go of its lock.
    assert lock_path().with_name(HOLDER_FILE).is_file()
    assert measuring_elsewhere() == ""
    record = lock_path().with_name(HOLDER_FILE)
    with measuring("this test"):
        assert json.loads(record.read_text())["pid"] == os.getpid()
    assert not record.exists()  # let go: no record naming a holder gone
