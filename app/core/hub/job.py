"""One download from start to install, with a thread-safe snapshot for progress views.

Before any byte: the plan (files, sizes, hashes), refused names, and free disk space
for what is still missing plus a margin. Files are fetched one after another into the
staging folder, each verified and renamed; then the pack is installed in one rename.
Pause keeps the staging folder (a later run resumes); cancel removes it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.install import PART, discard_staging, install, prepare_staging
from app.core.hub.plan import RepoPlan
from app.core.hub.transfer import DownloadCancelled, download_file
from app.core.infra.errors import DraftDeckError, HubError, WriteFailedError
from app.core.infra.job_queue import TrackedJob
from app.core.infra.transfer_stats import TransferFigures, disk_margin
from app.core.infra.units import format_bytes

log = logging.getLogger("draftdeck.hub")

QUEUED, PLANNING, DOWNLOADING, INSTALLING = "queued", "planning", "downloading", "installing"
DONE, FAILED, PAUSED, CANCELLED = "done", "failed", "paused", "cancelled"
FINISHED = (DONE, FAILED, PAUSED, CANCELLED)


@dataclass(frozen=True)
class JobStatus(TransferFigures):
    repo_id: str
    state: str = QUEUED
    revision: str | None = None
    done_bytes: int = 0
    total_bytes: int = 0
    files_done: int = 0
    files_total: int = 0
    current_file: str = ""
    file_done: int = 0  # bytes of the current file
    file_size: int = 0
    speed: float = 0.0  # bytes per second over the last few seconds
    error: str = ""
    path: str = ""  # the installed pack
    skipped: tuple[str, ...] = field(default=())


class DownloadJob(TrackedJob[JobStatus]):
    finished_states = FINISHED

    def __init__(
        self,
        repo_id: str,
        library: Path,
        config: HubConfig,
        revision: str | None = None,
        include_all: bool = False,
        free_bytes: Callable[[Path], int] | None = None,
        margin: Callable[[int], int] = disk_margin,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.repo_id = repo_id
        self.library = library
        self.config = config
        self.revision = revision
        self.include_all = include_all
        self._free_bytes = free_bytes or (lambda p: int(psutil.disk_usage(str(p)).free))
        self._margin = margin
        super().__init__(JobStatus(repo_id), clock)  # the clock behind speed and ETA
        self._stop: str | None = None  # PAUSED or CANCELLED once asked

    # -- control and observation (any thread) -------------------------------------------------

    def restart(self) -> None:
        """Make a paused, failed or cancelled job ready to run again (it resumes)."""
        self._stop = None
        self._meter.reset()
        self._set(state=QUEUED, error="", speed=0.0)

    def pause(self) -> None:
        self._stop = self._stop or PAUSED

    def cancel(self) -> None:
        self._stop = CANCELLED
        if self.status().state in FINISHED and self.status().state != DONE:
            discard_staging(self.library, self.repo_id)

    # -- the work (one worker thread) --------------------------------------------------------

    def run(self) -> JobStatus:
        """Plan, download, verify, install. Never raises: the status says what happened."""
        try:
            path = self._run()
        except DownloadCancelled:
            if self._stop == CANCELLED:
                discard_staging(self.library, self.repo_id)
            self._set(state=self._stop or CANCELLED, speed=0.0)
        except DraftDeckError as exc:
            log.warning("download of %s failed: %s", self.repo_id, exc)
            self._set(state=FAILED, error=str(exc), speed=0.0)
        else:
            self._set(state=DONE, path=str(path), speed=0.0, current_file="")
        return self.status()

    def _cancelled(self) -> bool:
        return self._stop is not None

    def _run(self) -> Path:
        self._set(state=PLANNING)
        plan = fetch_plan(self.config, self.repo_id, self.revision, self.include_all)
        self.library.mkdir(parents=True, exist_ok=True)
        staging = prepare_staging(self.library, plan)
        files = staging / "files"
        already = sum(self._present(files, f.path, f.size) for f in plan.files)
        self._check_space(plan, already)
        self._set(
            state=DOWNLOADING,
            revision=plan.revision,
            total_bytes=plan.total_bytes,
            done_bytes=already,
            files_total=len(plan.files),
            skipped=tuple(f.path for f in plan.skipped),
        )
        for index, item in enumerate(plan.files):
            if self._cancelled():
                raise DownloadCancelled(self.repo_id)
            final = files / item.path
            part = final.with_name(final.name + PART)
            self._set(
                current_file=item.path,
                files_done=index,
                file_size=item.size,
                file_done=part.stat().st_size if part.exists() else 0,
            )
            if final.is_file() and final.stat().st_size == item.size:
                continue  # verified in an earlier run
            try:
                download_file(
                    self.config,
                    plan.repo_id,
                    plan.revision,
                    item,
                    part,
                    self._on_bytes,
                    self._cancelled,
                )
            except HubError as exc:
                if exc.code == "corrupt":  # its bytes were thrown away
                    self._set(done_bytes=max(self.status().done_bytes - item.size, 0))
                raise
            try:
                # replace, not rename: on Windows rename fails when `final` exists (a
                # leftover of the wrong size); download_file has closed the part.
                part.replace(final)
            except OSError as exc:
                raise WriteFailedError(final, f"could not keep: {exc.strerror or exc}") from None
        self._set(state=INSTALLING, files_done=len(plan.files), current_file="")
        return install(self.library, plan, self.config.resolved_endpoint())

    @staticmethod
    def _present(files: Path, path: str, size: int) -> int:
        final = files / path
        if final.is_file() and final.stat().st_size == size:
            return size
        part = final.with_name(final.name + PART)
        return min(part.stat().st_size, size) if part.exists() else 0

    def _check_space(self, plan: RepoPlan, already: int) -> None:
        needed = plan.total_bytes - already + self._margin(plan.total_bytes)
        free = self._free_bytes(self.library)
        if free < needed:
            raise HubError(
                f"{plan.repo_id}: not enough free disk space in {self.library}: needs "
                f"{format_bytes(needed)} (the download plus a safety margin), "
                f"{format_bytes(free)} free; {format_bytes(needed - free)} missing",
                "disk_full",
            )
