"""The library's downloads from the Hub, as one service for the window and the CLI.

It owns what both need to agree on: the library folder and the Hub settings, the
catalog, a repo's plan, the download queue (one download per repo at a time; a retry
resumes), and which installed packs have a newer revision on the Hub. Its calls that
reach the Hub block; the window runs them off the GUI thread and watches `queue`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from app.core.hub.catalog import Catalog, load_catalog, refresh_live
from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.job import DONE, DownloadJob
from app.core.hub.manager import MAX_PARALLEL, DownloadManager
from app.core.hub.plan import RepoPlan, check_repo_id
from app.core.hub.updates import check_update
from app.core.infra.errors import HubError
from app.core.pack.files import installed_source
from app.core.pack.library import Library

INSTALLED, UPDATE_AVAILABLE = "installed", "update available"


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

    def plan(self, repo: str, include_all: bool = False) -> RepoPlan:
        """The files a download of `repo` would fetch (blocks on the Hub)."""
        return fetch_plan(self.config(), repo, include_all=include_all)

    # -- the queue ------------------------------------------------------------------------------

    def start(
        self, repo: str, revision: str | None = None, include_all: bool = False
    ) -> DownloadJob:
        """Queue a download of `repo`; the one already under way, if there is one."""
        with self._lock:
            job = self.queue.running(repo)
            if job is None:
                job = DownloadJob(repo, self.root, self.config(), revision, include_all)
                self.queue.submit(job)
        return job

    def pause(self, job: DownloadJob) -> None:
        """Stop after the current chunk; what arrived stays for a resume."""
        job.pause()

    def cancel(self, job: DownloadJob) -> None:
        """Stop and throw away what arrived."""
        job.cancel()

    def resume(self, job: DownloadJob) -> bool:
        """Run a paused, failed or cancelled download again, keeping the verified files;
        False if it is still running or done."""
        if not job.is_finished() or job.status().state == DONE:
            return False
        self.queue.submit(job)
        return True

    def clear_finished(self) -> list[DownloadJob]:
        """Drop the finished downloads from the queue; the ones dropped."""
        finished = [job for job in self.jobs() if job.is_finished()]
        self.queue.forget(finished)
        return finished

    def jobs(self) -> list[DownloadJob]:
        return list(self.queue.jobs)  # a copy: other threads may submit meanwhile

    def shutdown(self, timeout: float | None = None) -> None:
        """Pause every download (each resumes next time) and stop the threads."""
        self.queue.shutdown(timeout)

    # -- installed packs and their updates ----------------------------------------------------

    def installed(self) -> dict[str, str]:
        """Repo -> installed revision, for every pack DraftDeck downloaded."""
        found: dict[str, str] = {}
        for path, _ref in self.library.pack_folders():
            source = installed_source(path)
            if source and isinstance(source.get("repo"), str):
                found[source["repo"]] = str(source.get("revision", ""))
        return found

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
        """Repo -> "installed" or "update available", from the last update check."""
        with self._lock:
            outdated = dict(self._outdated)
        return {
            repo: UPDATE_AVAILABLE if outdated.get(repo) == revision else INSTALLED
            for repo, revision in self.installed().items()
        }
