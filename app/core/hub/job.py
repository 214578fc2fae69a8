"""One download from start to install, with a thread-safe snapshot for progress views.

Before any byte: the plan (files, sizes, hashes), refused names, and free disk space
for what is still missing plus a margin. Files are fetched one after another into the
staging folder, each checked on disk (the bytes the file holds, read back as it is
written; a file kept from an earlier run is read again) and renamed; then the pack is
installed in one rename. One download per repo at a time, across processes
(repo_lock.py): a second waits, then finds the pack installed. A pack already installed
at the revision, its files intact, is not fetched again unless forced. Pause
keeps the staging folder (a later run resumes, and lists it: `interrupted`); cancel
removes it. Whatever is raised, the job ends in a finished state with a message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.install import PART, discard_staging, install, prepare_staging, staging_dir
from app.core.hub.interrupted import Interrupted, present_bytes
from app.core.hub.pack_check import check_pack
from app.core.hub.plan import RepoPlan, check_repo_id
from app.core.hub.repo_lock import RepoLock
from app.core.hub.transfer import DownloadCancelled, download_file, matches_on_disk
from app.core.infra.errors import DraftDeckError, HubError, WriteFailedError
from app.core.infra.job_queue import TrackedJob
from app.core.infra.transfer_stats import TransferFigures, disk_margin
from app.core.infra.units import format_bytes
from app.core.infra.words import Word
from app.core.pack.files import installed_source

log = logging.getLogger("draftdeck.hub")


class DownloadState(Word):
    QUEUED = "queued"
    PLANNING = "planning"
    WAITING = "waiting for another download of this repo"
    VERIFYING = "checking the installed files"
    DOWNLOADING = "downloading"
    INSTALLING = "installing"
    DONE = "done"
    FAILED = "failed"
    PAUSED = "paused"
    CANCELLED = "cancelled"


# Module names for the states, as the pages and tests import them.
QUEUED, PLANNING, WAITING = DownloadState.QUEUED, DownloadState.PLANNING, DownloadState.WAITING
VERIFYING, DOWNLOADING = DownloadState.VERIFYING, DownloadState.DOWNLOADING
INSTALLING, DONE, FAILED = DownloadState.INSTALLING, DownloadState.DONE, DownloadState.FAILED
PAUSED, CANCELLED = DownloadState.PAUSED, DownloadState.CANCELLED
FINISHED = (DONE, FAILED, PAUSED, CANCELLED)
LOCK_POLL = 0.2  # seconds between tries for a repo another download holds


@dataclass(frozen=True)
class JobStatus(TransferFigures):
    repo_id: str
    state: DownloadState = QUEUED
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
    up_to_date: bool = False  # done without fetching: this revision was installed, intact


class DownloadJob(TrackedJob[JobStatus]):
    finished_states = FINISHED

    def __init__(
        self,
        repo_id: str,
        library: Path,
        config: HubConfig,
        revision: str | None = None,
        include_all: bool = False,
        force: bool = False,
        free_bytes: Callable[[Path], int] | None = None,
        margin: Callable[[int], int] = disk_margin,
        clock: Callable[[], float] = time.monotonic,
        twins: Callable[[Path], Sequence[str]] = lambda _pack: (),
    ) -> None:
        self.repo_id = repo_id
        self.library = library
        self.config = config
        self.revision = revision
        self.include_all = include_all
        self.force = force  # fetch again even when this revision is installed and intact
        self._free_bytes = free_bytes or (lambda p: int(psutil.disk_usage(str(p)).free))
        self._margin = margin
        self._twins = twins  # what an installed pack duplicates (pack_twins.py)
        super().__init__(JobStatus(repo_id), clock)  # the clock behind speed and ETA
        self._clock = clock  # and behind how often progress is reported
        self._stop: DownloadState | None = None  # PAUSED or CANCELLED once asked

    @classmethod
    def interrupted(
        cls,
        found: Interrupted,
        library: Path,
        config: HubConfig,
        twins: Callable[[Path], Sequence[str]] = lambda _pack: (),
    ) -> DownloadJob:
        """A paused job for a download an earlier run left unfinished; Resume goes on
        with the same revision, keeping the files that arrived."""
        plan = found.plan
        job = cls(plan.repo_id, library, config, plan.revision, found.include_all, twins=twins)
        job._set_plan(plan, found.done_bytes, state=PAUSED, files_done=found.files_done)
        return job

    # -- control and observation (any thread) -------------------------------------------------

    def leaves_partial(self) -> bool:
        """Whether this stopped download left files on disk for a resume."""
        return (
            self.status().state in (PAUSED, FAILED)
            and staging_dir(self.library, self.repo_id).is_dir()
        )

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
            waited = self._wait_for(lock)  # another download of it may have installed it
            if (waited or not self.force) and (pack := self._installed_copy(plan)) is not None:
                return pack  # this revision is installed and intact: nothing to fetch
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
        """The pack folder if it holds this plan's files, verified (the user's edits of
        its JSON files are theirs, not damage)."""
        pack = self.library / plan.folder_name
        source = installed_source(pack)
        if not source or (source.get("repo"), source.get("revision")) != (
            plan.repo_id,
            plan.revision,
        ):
            return None
        self._set(state=VERIFYING)
        check = check_pack(pack)
        # With the export files asked for, a pack installed without them is not enough.
        if not check.intact or not {f.path for f in plan.files} <= set(check.names):
            return None
        self._set_plan(plan, plan.total_bytes, up_to_date=True, files_done=len(plan.files))
        return pack

    def _set_plan(self, plan: RepoPlan, done_bytes: int, **more: object) -> None:
        """Show what the plan fetches, and how much of it is done."""
        self._set(
            revision=plan.revision,
            total_bytes=plan.total_bytes,
            done_bytes=done_bytes,
            files_total=len(plan.files),
            skipped=tuple(f.path for f in plan.skipped),
            **more,
        )

    def _download(self, plan: RepoPlan) -> Path:
        staging = prepare_staging(self.library, plan)
        files = staging / "files"
        already = sum(present_bytes(files, f) for f in plan.files)
        self._check_space(plan, already)
        self._set_plan(plan, already, state=DOWNLOADING)
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
        # No second pass over the files: each was just checked on disk, and re-reading
        # a 3 GB pack cost a quarter of the download's time.
        self._set(state=INSTALLING, files_done=len(plan.files), current_file="")
        installed = install(self.library, plan, self.config.resolved_endpoint())
        self._set(notes=installed.notes + tuple(self._twins(installed.path)))
        return installed.path

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
