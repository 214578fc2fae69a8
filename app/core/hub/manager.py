"""Several downloads at once: a queue served by a small pool of worker threads."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from app.core.hub.job import FINISHED, DownloadJob, JobStatus

MAX_PARALLEL = 2


class DownloadManager:
    def __init__(self, max_parallel: int = MAX_PARALLEL) -> None:
        self._pool = ThreadPoolExecutor(max_parallel, thread_name_prefix="download")
        self._lock = threading.Lock()
        self.jobs: list[DownloadJob] = []
        self._futures: dict[int, Future[JobStatus]] = {}

    def submit(self, job: DownloadJob) -> None:
        with self._lock:
            if job not in self.jobs:
                self.jobs.append(job)
            elif job.status().state in FINISHED:
                job.restart()  # a retry: it resumes from what arrived before
            self._futures[id(job)] = self._pool.submit(job.run)

    def active(self, repo_id: str) -> DownloadJob | None:
        with self._lock:
            for job in self.jobs:
                if job.repo_id == repo_id and job.status().state not in FINISHED:
                    return job
        return None

    def wait(self, job: DownloadJob, timeout: float | None = None) -> JobStatus:
        return self._futures[id(job)].result(timeout)

    def remove_finished(self) -> None:
        with self._lock:
            self.jobs = [j for j in self.jobs if j.status().state not in FINISHED]

    def shutdown(self, timeout: float | None = None) -> None:
        """Pause everything (downloads resume next time) and stop the threads.

        With a timeout, waits at most that long: a worker stuck in a network call is
        left to finish on its own (its job is paused and installs nothing).
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
