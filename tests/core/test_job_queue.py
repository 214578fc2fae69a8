"""JobQueue tells its subscribers about every change of its jobs, from the jobs' threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from app.core.infra.job_queue import JobQueue, TrackedJob
from app.core.infra.transfer_stats import TransferFigures

WAIT = 30.0  # seconds; a guard against a hang, not a speed limit


@dataclass(frozen=True)
class StepStatus(TransferFigures):
    state: str = "queued"
    done_bytes: int = 0
    total_bytes: int = 10
    speed: float = 0.0
    error: str = ""
    current_file: str = ""
    file_done: int = 0


class SteppedJob(TrackedJob[StepStatus]):
    """Moves queued -> running -> (10 bytes) -> done, each step when the test says so."""

    finished_states = ("done", "paused")

    def __init__(self) -> None:
        super().__init__(StepStatus())
        self.go = threading.Event()  # start running
        self.finish = threading.Event()  # then finish

    def run(self) -> StepStatus:
        assert self.go.wait(WAIT)
        self._set(state="running")
        assert self.finish.wait(WAIT)
        self._on_bytes(10)
        self._set(state="done")
        return self.status()

    def restart(self) -> None:
        self.go.clear()
        self.finish.clear()
        self._set(state="queued", done_bytes=0, file_done=0)

    def pause(self) -> None:
        self.go.set()
        self.finish.set()


@pytest.fixture
def queue() -> Iterator[JobQueue[SteppedJob]]:
    jobs: JobQueue[SteppedJob] = JobQueue(1, "test-queue")
    yield jobs
    jobs.shutdown(timeout=WAIT)


def _run_through(queue: JobQueue[SteppedJob], job: SteppedJob) -> None:
    job.go.set()
    job.finish.set()
    queue.wait(job, WAIT)
    assert job.status().state == "done"


def test_subscribers_hear_every_status_change_in_order(queue: JobQueue[SteppedJob]) -> None:
    job = SteppedJob()
    seen: list[tuple[str, int]] = []
    queue.subscribe(lambda: seen.append((job.status().state, job.status().done_bytes)))
    assert not queue.active()
    queue.submit(job)
    assert queue.active()  # queued counts as active
    job.go.set()
    _wait_until(lambda: job.status().state == "running")
    assert queue.active()
    job.finish.set()
    assert queue.wait(job, WAIT) == job.status()
    assert not queue.active()
    # The submit (the list changed), then each change the job made, from its thread.
    assert seen == [("queued", 0), ("running", 0), ("running", 10), ("done", 10)]
    queue.forget([job])
    assert queue.jobs == [] and len(seen) == 5  # the list changed again


def test_unsubscribe_stops_the_reports(queue: JobQueue[SteppedJob]) -> None:
    first: list[str] = []
    second: list[str] = []
    unsubscribe = queue.subscribe(lambda: first.append("change"))
    queue.subscribe(lambda: second.append("change"))
    job = SteppedJob()
    queue.submit(job)
    _run_through(queue, job)
    assert len(first) == len(second) == 4
    unsubscribe()
    unsubscribe()  # twice is harmless
    other = SteppedJob()
    queue.submit(other)
    _run_through(queue, other)
    assert len(first) == 4 and len(second) == 8


def test_a_finished_job_submitted_again_runs_again_without_deadlock(
    queue: JobQueue[SteppedJob],
) -> None:
    job = SteppedJob()
    states: list[str] = []

    def on_change() -> None:
        # Reads the queue from inside a report: on the submitting thread (the restart
        # reports while submit holds the queue's lock) and on the job's thread.
        queue.active()
        states.append(job.status().state)

    queue.subscribe(on_change)
    queue.submit(job)
    _run_through(queue, job)
    states.clear()
    resubmit = threading.Thread(target=queue.submit, args=(job,))
    resubmit.start()
    resubmit.join(WAIT)
    assert not resubmit.is_alive(), "submitting a finished job again deadlocked"
    assert queue.jobs == [job]  # the same row, not a second one
    _run_through(queue, job)
    assert states[0] == "queued" and states[-1] == "done"
    assert "running" in states


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)
