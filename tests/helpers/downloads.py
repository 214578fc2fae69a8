"""Waiting on the downloads service in tests without a Qt event loop."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.hub.downloads import Downloads
from app.core.hub.job import DownloadJob


def finish(downloads: Downloads, job: DownloadJob) -> str:
    """Wait until the job has run; its final state."""
    downloads.queue.wait(job, timeout=60)
    return job.status().state


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed limit
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
