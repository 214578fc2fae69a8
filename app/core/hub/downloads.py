"""The library's downloads from the Hub, as one service for the window and the CLI.

It owns what both need to agree on: the library folder and the Hub settings, the
catalog, a repo's plan, the download queue (one download per repo at a time; a retry
resumes; downloads an earlier run left unfinished come back paused), and which installed
packs have a newer revision on the Hub. Its calls that reach the Hub block; the window
runs them off the GUI thread and watches `queue`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from app.core.hub.catalog import Catalog, load_catalog, refresh_live
from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.interrupted import find_interrupted
from app.core.hub.job import DONE, FAILED, PAUSED, DownloadJob
from app.core.hub.manager import MAX_PARALLEL, DownloadManager
from app.core.hub.pack_check import PackCheck, check_pack
from app.core.hub.plan import RepoPlan, check_repo_id
from app.core.hub.repo_lock import RepoLock
from app.core.hub.updates import check_update
from app.core.infra.errors import HubError
from app.core.pack.files import installed_source
from app.core.pack.library import Library, PackEntry
from app.core.pack.pack_twins import twin_notes

INSTALLED, UPDATE_AVAILABLE = "installed", "update available"
# Short: the catalog's Installed column must fit at 1024 px beside the names.
PARTIAL, DOWNLOADING = "partial", "downloading"


class Downloads:
    def __init__(
        self,
        library: Library,
        config: HubConfig | None = None,
        max_parallel: int = MAX_PARALLEL,
    ) -> None:
        self.library = library
        self._config = config  # None: from the settings at each use (the token may change)
        self.queue = DownloadManager(max_parallel)
        self._lock = threading.Lock()
        # repo -> the installed revision the last update check found outdated; a pack
        # installed again since then is the newest, whatever the check said.
        self._outdated: dict[str, str] = {}

    @property
    def root(self) -> Path:
        return self.library.root

    def config(self) -> HubConfig:
        return self._config or HubConfig.from_settings(self.library.settings)

    # -- the catalog ----------------------------------------------------------------------------

    def catalog(self) -> Catalog:
        """Curated repos, the cached Hub listing and the repos the user added (offline)."""
        return load_catalog(self.library.settings.extra_repos)

    def refresh_catalog(self) -> Catalog:
        """List the curated collections on the Hub now (blocks; cached for offline use)."""
        refresh_live(self.config())
        return self.catalog()

    def add_repo(self, repo: str) -> None:
        """Remember a repo the user typed; HubError if it is not an `owner/name`."""
        check_repo_id(repo)
        settings = self.library.settings
        if repo not in settings.extra_repos:
            settings.extra_repos.append(repo)
            self.library.save_settings()

    def remove_repo(self, repo: str) -> bool:
        """Forget a repo the user added (say, one the Hub does not have); whether it was
        one of theirs (curated and listed repos cannot be removed)."""
        settings = self.library.settings
        if repo not in settings.extra_repos:
            return False
        settings.extra_repos.remove(repo)
        self.library.save_settings()
        return True

    def plan(self, repo: str, include_all: bool = False) -> RepoPlan:
        """The files a download of `repo` would fetch (blocks on the Hub)."""
        return fetch_plan(self.config(), repo, include_all=include_all)

    # -- the queue ------------------------------------------------------------------------------

    def start(
        self,
        repo: str,
        revision: str | None = None,
        include_all: bool = False,
        force: bool = False,
    ) -> DownloadJob:
        """Queue a download of `repo`; the one already under way, if there is one.
        A paused or failed one of the same repo makes way: the new one goes on from its
        files (same revision) or replaces them. Without `force`, a pack installed at that
        revision with its files intact is not fetched again (the job says `up_to_date`)."""
        with self._lock:
            job = self.queue.running(repo)
            if job is None:
                self.queue.forget(
                    [
                        j
                        for j in self.jobs()
                        if j.repo_id == repo and j.status().state in (PAUSED, FAILED)
                    ]
                )
                job = DownloadJob(
                    repo, self.root, self.config(), revision, include_all, force, twins=self._twins
                )
                self.queue.submit(job)
        return job

    def restore_interrupted(self) -> list[DownloadJob]:
        """List, paused, the downloads an earlier run left unfinished (their staging
        folders), except those another process is downloading now; the jobs added."""
        listed = {job.repo_id for job in self.jobs()}
        restored = []
        for found in find_interrupted(self.root):
            repo = found.plan.repo_id
            lock = RepoLock(self.root, repo)
            try:
                free = lock.try_acquire()
            except OSError:
                free = True  # no lock folder: no other download holds it
            finally:
                lock.release()
            if free and repo not in listed:
                restored.append(
                    DownloadJob.interrupted(found, self.root, self.config(), self._twins)
                )
        self.queue.adopt(restored)
        return restored

    def _twins(self, pack: Path) -> list[str]:
        """What a pack just installed duplicates in the library (on the job's thread)."""
        return twin_notes(pack, self.library.scan())

    def pause(self, job: DownloadJob) -> None:
        """Stop after the current chunk; what arrived stays for a resume."""
        job.pause()

    def cancel(self, job: DownloadJob) -> None:
        """Stop and throw away what arrived (a stopped download's: discard it)."""
        job.cancel()

    def resume(self, job: DownloadJob) -> bool:
        """Run a paused, failed or cancelled download again, keeping the verified files;
        False if it is still running or done."""
        if not job.is_finished() or job.status().state == DONE:
            return False
        self.queue.submit(job)
        return True

    def clear_finished(self) -> list[DownloadJob]:
        """Drop the downloads that are over and left nothing on disk; the ones dropped.
        A paused one, or a failed one with files to resume from, stays until resumed or
        discarded: dropped, its staging folder would sit on disk with nothing to show it."""
        over = [job for job in self.jobs() if job.is_finished() and not job.leaves_partial()]
        self.queue.forget(over)
        return over

    def running(self) -> list[DownloadJob]:
        """Downloads queued or under way (what quitting would interrupt)."""
        return [job for job in self.jobs() if not job.is_finished()]

    def jobs(self) -> list[DownloadJob]:
        return list(self.queue.jobs)  # a copy: other threads may submit meanwhile

    def shutdown(self, timeout: float | None = None) -> None:
        """Pause every download (each resumes next time) and stop the threads."""
        self.queue.shutdown(timeout)

    # -- installed packs and their updates ----------------------------------------------------

    def installed(self) -> dict[str, str]:
        """Repo -> installed revision, for every pack DraftDeck downloaded."""
        return {repo: revision for repo, (_path, revision) in self._installed_packs().items()}

    def installed_readings(self) -> dict[str, PackEntry]:
        """Repo -> its installed pack as the Library reads it (Library.scan: a pack is
        read again only when its files changed; blocks the first time)."""
        repos = {path: repo for repo, (path, _revision) in self._installed_packs().items()}
        return {repos[e.path]: e for e in self.library.scan() if e.path in repos}

    def installed_pack(self, repo: str) -> tuple[Path, str] | None:
        """The folder and revision of `repo` as installed, if DraftDeck downloaded it."""
        return self._installed_packs().get(repo)

    def _installed_packs(self) -> dict[str, tuple[Path, str]]:
        found: dict[str, tuple[Path, str]] = {}
        for path, _ref in self.library.pack_folders():
            source = installed_source(path)
            if source and isinstance(source.get("repo"), str):
                found[source["repo"]] = (path, str(source.get("revision", "")))
        return found

    def verify(self, repo: str) -> PackCheck | None:
        """Check the installed copy of `repo` file by file (reads every file: blocks);
        None when it is not installed."""
        found = self.installed_pack(repo)
        return check_pack(found[0]) if found else None

    def check_updates(self) -> set[str]:
        """Ask the Hub which installed packs have a newer revision (blocks); those repos.
        A pack the Hub cannot answer for (offline, gone) counts as up to date."""
        outdated: dict[str, str] = {}
        for path, _ref in self.library.pack_folders():
            try:
                info = check_update(self.config(), path)
            except HubError:
                continue
            if info is not None and info.available:
                outdated[info.repo_id] = info.installed
        with self._lock:
            self._outdated = outdated
        return set(outdated)

    def marks(self) -> dict[str, str]:
        """Repo -> "installed" or "update available" (from the last update check),
        and whether a download of it is under way or left a partial one on disk."""
        with self._lock:
            outdated = dict(self._outdated)
        marks = {
            repo: UPDATE_AVAILABLE if outdated.get(repo) == revision else INSTALLED
            for repo, revision in self.installed().items()
        }
        running = {job.repo_id for job in self.running()}
        partial = {found.plan.repo_id for found in find_interrupted(self.root)}
        for repo in sorted(running | partial):
            said = DOWNLOADING if repo in running else PARTIAL
            marks[repo] = f"{marks[repo]}, {said}" if repo in marks else said
        return marks
