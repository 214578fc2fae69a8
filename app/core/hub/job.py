"""One download from start to install, with a thread-safe snapshot for progress views.

Before any byte: the plan (files, sizes, hashes), refused names, and free disk space
for what is still missing plus a margin. Files are fetched one after another into the
staging folder, each verified and renamed; then the bytes on disk are checked once more
and the pack is installed in one rename. One download per repo at a time, across
processes (repo_lock.py): a second waits, then finds the pack installed. Pause keeps the
staging folder (a later run resumes); cancel removes it. Whatever is raised, the job
ends in a finished state with a message.
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
from app.core.hub.plan import RepoPlan, check_repo_id
from app.core.hub.repo_lock import RepoLock
from app.core.hub.transfer import DownloadCancelled, download_file, matches_on_disk
from app.core.infra.errors import DraftDeckError, HubError, WriteFailedError
from app.core.infra.job_queue import TrackedJob
from app.core.infra.transfer_stats import TransferFigures, disk_margin
from app.core.infra.units import format_bytes
from app.core.pack.files import installed_source

log = logging.getLogger("draftdeck.hub")

QUEUED, PLANNING, DOWNLOADING, INSTALLING = "queued", "planning", "downloading", "installing"
WAITING = "waiting for another download of this repo"
DONE, FAILED, PAUSED, CANCELLED = "done", "failed", "paused", "cancelled"
FINISHED = (DONE, FAILED, PAUSED, CANCELLED)
LOCK_POLL = 0.2  # seconds between tries for a repo another download holds


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
    notes: tuple[str, ...] = field(default=())  # what an update did with the user's files


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
        self._clock = clock  # and behind how often progress is reported
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
        # A stopped job (paused, failed) has no worker left to report the cancel.
        if self._set_if((PAUSED, FAILED, CANCELLED), state=CANCELLED, speed=0.0):
            self._discard_unless_in_use()

    def _discard_unless_in_use(self) -> None:
        """Remove the staging folder, unless another download of the repo is using it."""
        lock = RepoLock(self.library, self.repo_id)
        try:
            if lock.try_acquire():
                discard_staging(self.library, self.repo_id)
        except OSError:
            pass  # no library to clean up
        finally:
            lock.release()

    # -- the work (one worker thread) --------------------------------------------------------

    def run(self) -> JobStatus:
        """Plan, download, verify, install. Never raises: the status says what happened."""
        try:
            path = self._run()
        except DownloadCancelled:
            self._set(state=self._stop or CANCELLED, speed=0.0)
        except DraftDeckError as exc:
            log.warning("download of %s failed: %s", self.repo_id, exc)
            self._set(state=FAILED, error=str(exc), speed=0.0)
        except OSError as exc:  # the library itself: read-only, missing, full
            where = f" ({exc.filename})" if exc.filename else ""
            log.warning("download of %s failed: %s", self.repo_id, exc)
            self._set(
                state=FAILED, error=f"{self.repo_id}: {exc.strerror or exc}{where}", speed=0.0
            )
        except Exception as exc:  # a bug or a library's surprise: still a finished job
            log.exception("download of %s failed unexpectedly", self.repo_id)
            self._set(state=FAILED, error=f"{self.repo_id}: unexpected error: {exc!r}", speed=0.0)
        else:
            self._set(state=DONE, path=str(path), speed=0.0, current_file="")
        return self.status()

    def _cancelled(self) -> bool:
        return self._stop is not None

    def _run(self) -> Path:
        check_repo_id(self.repo_id)
        self._set(state=PLANNING)
        plan = fetch_plan(self.config, self.repo_id, self.revision, self.include_all)
        self.library.mkdir(parents=True, exist_ok=True)
        lock = RepoLock(self.library, self.repo_id)
        try:
            if self._wait_for(lock) and (pack := self._installed_copy(plan)) is not None:
                return pack  # the download we waited for installed this revision
            return self._download(plan)
        except DownloadCancelled:
            if self._stop == CANCELLED and lock.held:
                discard_staging(self.library, self.repo_id)
            raise
        finally:
            lock.release()

    def _wait_for(self, lock: RepoLock) -> bool:
        """Hold the repo's lock; whether another download had it first."""
        if lock.try_acquire():
            return False
        self._set(state=WAITING)
        while not lock.try_acquire():
            if self._cancelled():
                raise DownloadCancelled(self.repo_id)
            time.sleep(LOCK_POLL)
        return True

    def _installed_copy(self, plan: RepoPlan) -> Path | None:
        """The pack folder if it holds exactly this plan's files, verified."""
        pack = self.library / plan.folder_name
        source = installed_source(pack)
        if not source or (source.get("repo"), source.get("revision")) != (
            plan.repo_id,
            plan.revision,
        ):
            return None
        if not all(matches_on_disk(pack / f.path, f) for f in plan.files):
            return None
        self._set(
            revision=plan.revision,
            total_bytes=plan.total_bytes,
            done_bytes=plan.total_bytes,
            files_total=len(plan.files),
            files_done=len(plan.files),
            skipped=tuple(f.path for f in plan.skipped),
        )
        return pack

    def _download(self, plan: RepoPlan) -> Path:
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
            if matches_on_disk(final, item):
                continue  # fetched in an earlier run, and still intact
            try:
                download_file(
                    self.config,
                    plan.repo_id,
                    plan.revision,
                    item,
                    part,
                    self._on_bytes,
                    self._cancelled,
                    self._clock,
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
        self._verify_on_disk(files, plan)
        installed = install(self.library, plan, self.config.resolved_endpoint())
        self._set(notes=installed.notes)
        return installed.path

    def _verify_on_disk(self, files: Path, plan: RepoPlan) -> None:
        """Check the bytes the install rename will put in place, not the ones sent."""
        for item in plan.files:
            final = files / item.path
            if not matches_on_disk(final, item):
                final.unlink(missing_ok=True)  # a resume fetches it again
                raise HubError(
                    f"{plan.repo_id}/{item.path}: the file on disk does not match the Hub's "
                    f"{'sha256' if item.sha256 else 'git blob id'} or size; it was discarded",
                    "corrupt",
                )

    @staticmethod
    def _present(files: Path, path: str, size: int) -> int:
        final = files / path
        if final.is_file() and final.stat().st_size == size:
            return size
        part = final.with_name(final.name + PART)
        kept = part.stat().st_size if part.exists() else 0
        return kept if kept <= size else 0  # an oversized part is discarded, not resumed

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
