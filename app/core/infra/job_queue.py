"""A queue of long jobs served by a fixed number of worker threads: a pool for
downloads, a single lane for the phone (one adb transfer at a time), one for tune
sweeps. Whoever shows the jobs subscribes to the queue and is told when any job's
status changes (from the job's thread); nobody polls."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import Field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from app.core.infra.transfer_stats import SpeedMeter


class JobState(Protocol):
    """What every job's status is: a frozen dataclass, so that a change is a new
    snapshot (`dataclasses.replace`), with a state (a tune sweep's has no bytes)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def state(self) -> str: ...


class JobProgress(JobState, Protocol):
    """What a transfer's status shows, whatever the transfer (downloads, pushes)."""

    @property
    def error(self) -> str: ...

    @property
    def current_file(self) -> str: ...

    @property
    def done_bytes(self) -> int: ...

    @property
    def total_bytes(self) -> int: ...

    @property
    def file_done(self) -> int: ...

    @property
    def speed(self) -> float: ...

    @property
    def fraction(self) -> float: ...

    @property
    def eta_seconds(self) -> float | None: ...


S = TypeVar("S", bound=JobState)
P = TypeVar("P", bound=JobProgress)


class TrackedJob(Generic[S]):
    """A job whose status is an immutable snapshot, replaced under a lock, so any
    thread may read it while the worker thread moves it on."""

    finished_states: ClassVar[tuple[str, ...]] = ()

    def __init__(self, status: S, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._status = status
        self._meter = SpeedMeter(clock=clock)  # the clock behind `speed` (tests fake it)
        self._on_change: Callable[[], None] = _nothing

    def listen(self, on_change: Callable[[], None]) -> None:
        """Call `on_change` (from the job's thread) after each change of status."""
        self._on_change = on_change

    def status(self) -> S:
        with self._lock:
            return self._status

    def is_finished(self) -> bool:
        return self.status().state in self.finished_states

    def _set(self, **changes: object) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)
        self._on_change()

    def _set_if(self, states: tuple[str, ...], **changes: object) -> bool:
        """Change the status only while its state is one of `states`, checked under the
        same lock (a resume may be restarting the job meanwhile); whether it changed."""
        with self._lock:
            if self._status.state not in states:
                return False
            self._status = replace(self._status, **changes)
        self._on_change()
        return True

    def _on_bytes(self: TrackedJob[P], count: int) -> None:
        """`count` more bytes of the current file went through."""
        with self._lock:
            done = self._status.done_bytes + count
            self._status = replace(
                self._status,
                done_bytes=done,
                file_done=self._status.file_done + count,
                speed=self._meter.add(done),
            )
        self._on_change()


def _nothing() -> None:
    pass


class Job(Protocol):
    def run(self) -> object: ...

    def listen(self, on_change: Callable[[], None]) -> None: ...

    def restart(self) -> None: ...

    def pause(self) -> None: ...

    def is_finished(self) -> bool: ...


J = TypeVar("J", bound=Job)


class JobQueue(Generic[J]):
    def __init__(self, max_parallel: int, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_parallel, thread_name_prefix=name)
        # Reentrant: a job restarted under it reports its change to `_changed`.
        self._lock = threading.RLock()
        self.jobs: list[J] = []
        self._futures: dict[int, Future[object]] = {}
        self._subscribers: list[Callable[[], None]] = []

    def subscribe(self, on_change: Callable[[], None]) -> Callable[[], None]:
        """Call `on_change` (from any thread) whenever a job or the list changes.
        Returns the function that unsubscribes."""
        with self._lock:
            self._subscribers.append(on_change)

        def unsubscribe() -> None:
            with self._lock:
                if on_change in self._subscribers:
                    self._subscribers.remove(on_change)

        return unsubscribe

    def _changed(self) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for notify in subscribers:
            notify()

    def active(self) -> bool:
        """Whether any job is still queued or running."""
        with self._lock:
            return any(not job.is_finished() for job in self.jobs)

    def submit(self, job: J) -> None:
        with self._lock:
            if job.is_finished():
                job.restart()  # a retry: it resumes from what was done before
            if job not in self.jobs:
                self.jobs.append(job)
            job.listen(self._changed)
            self._futures[id(job)] = self._pool.submit(job.run)
        self._changed()

    def wait(self, job: J, timeout: float | None = None) -> object:
        return self._futures[id(job)].result(timeout)

    def forget(self, jobs: list[J]) -> None:
        """Drop these (finished) jobs from the list, e.g. the rows a view cleared."""
        with self._lock:
            self.jobs = [j for j in self.jobs if j not in jobs]
        self._changed()

    def shutdown(self, timeout: float | None = None) -> None:
        """Pause everything (jobs resume next time) and stop the threads.

        With a timeout, waits at most that long: a worker stuck in a network call is
        left to finish on its own (its job is paused and completes nothing).
        """
        with self._lock:
            jobs = list(self.jobs)
        for job in jobs:
            job.pause()
        self._pool.shutdown(wait=timeout is None, cancel_futures=True)
        if timeout is not None:
            deadline = time.monotonic() + timeout
            for thread in list(getattr(self._pool, "_threads", ())):
                thread.join(max(deadline - time.monotonic(), 0))
