"""Several downloads at once: a queue served by a small pool of worker threads."""

from __future__ import annotations

from app.core.hub.job import DownloadJob
from app.core.infra.job_queue import JobQueue

MAX_PARALLEL = 2


class DownloadManager(JobQueue[DownloadJob]):
    def __init__(self, max_parallel: int = MAX_PARALLEL) -> None:
        super().__init__(max_parallel, "download")

    def running(self, repo_id: str) -> DownloadJob | None:
        """The download of `repo_id` still queued or under way, if any."""
        with self._lock:
            for job in self.jobs:
                if job.repo_id == repo_id and not job.is_finished():
                    return job
        return None

    def adopt(self, jobs: list[DownloadJob]) -> None:
        """List stopped jobs without running them (downloads an earlier run left
        unfinished); a resume submits them."""
        with self._lock:
            for job in jobs:
                if job not in self.jobs:
                    self.jobs.append(job)
                    job.listen(self._changed)
        self._changed()
