"""The Downloads service the window and the CLI share, against the local Hub stand-in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.hub.downloads import INSTALLED, UPDATE_AVAILABLE, Downloads
from app.core.hub.hub_api import HubConfig
from app.core.hub.install import staging_dir
from app.core.hub.job import CANCELLED, DONE, FAILED, PAUSED, DownloadJob
from app.core.infra.errors import HubError
from app.core.infra.settings import load_settings
from tests.conftest import DRAFT_REPO
from tests.helpers.downloads import finish, wait_for
from tests.helpers.read_only import read_only_folder
from tests.hub_server import FakeHub

Fixture = Callable[[str], Path]
REPO = DRAFT_REPO
FOLDER = "Qwen3-0.6B-kl-baseline-20k-MNN"


def test_one_download_per_repo_into_the_library(downloads: Downloads, hub: FakeHub) -> None:
    hub.throttle_bytes_per_s = 200_000
    job = downloads.start(REPO)
    assert downloads.start(REPO) is job  # already under way: the same download
    assert downloads.queue.active()
    assert finish(downloads, job) == DONE, job.status().error
    assert not downloads.queue.active()
    assert job.status().path == str(downloads.root / FOLDER)
    assert downloads.installed() == {REPO: hub.sha(REPO)}
    assert downloads.marks() == {REPO: INSTALLED}
    again = downloads.start(REPO)  # finished: a new download
    assert again is not job and finish(downloads, again) == DONE
    assert downloads.jobs() == [job, again]


def test_resume_after_a_failure_keeps_verified_files(downloads: Downloads, hub: FakeHub) -> None:
    hub.corrupt.add("llm.mnn.weight")
    job = downloads.start(REPO)
    assert finish(downloads, job) == FAILED
    assert "do not match" in job.status().error
    served = dict(hub.bytes_served)
    hub.corrupt.clear()
    assert downloads.resume(job)
    assert finish(downloads, job) == DONE
    assert hub.bytes_served["config.json"] == served["config.json"]
    assert not downloads.resume(job)  # done: nothing to resume


def test_pause_cancel_and_clear(downloads: Downloads, hub: FakeHub) -> None:
    hub.throttle_bytes_per_s = 50_000
    job = downloads.start(REPO)
    wait_for(lambda: job.status().done_bytes > 0)
    assert not downloads.resume(job)  # still running
    downloads.pause(job)
    assert finish(downloads, job) == PAUSED
    assert staging_dir(downloads.root, REPO).exists()
    downloads.cancel(job)  # a paused download: its files go at once
    assert not staging_dir(downloads.root, REPO).exists()
    other = downloads.start("nobody/nothing")
    assert finish(downloads, other) == FAILED
    assert downloads.clear_finished() == [job, other]
    assert downloads.jobs() == []
    running = downloads.start(REPO)
    downloads.cancel(running)
    assert finish(downloads, running) == CANCELLED


def test_update_check_marks_outdated_packs_until_installed_again(
    downloads: Downloads, hub: FakeHub, fixture_bundle: Fixture
) -> None:
    assert finish(downloads, downloads.start(REPO)) == DONE
    assert downloads.check_updates() == set()
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    files["README.md"] = b"v2\n"
    hub.add_repo(REPO, files)
    hub.add_folder("me/other-pack", fixture_bundle("fast-draft"))
    assert downloads.check_updates() == {REPO}
    assert downloads.marks() == {REPO: UPDATE_AVAILABLE}
    # Another pack arriving keeps the mark; installing the update clears it.
    assert finish(downloads, downloads.start("me/other-pack")) == DONE
    assert downloads.marks() == {REPO: UPDATE_AVAILABLE, "me/other-pack": INSTALLED}
    assert finish(downloads, downloads.start(REPO)) == DONE
    assert downloads.marks() == {REPO: INSTALLED, "me/other-pack": INSTALLED}
    hub.remove_repo(REPO)  # gone from the Hub: up to date as far as anyone can tell
    assert downloads.check_updates() == set()


def test_catalog_plan_and_added_repos(downloads: Downloads, hub: FakeHub) -> None:
    assert downloads.catalog().age_seconds() is None
    slug = "darkmaniac7/tokforge-mobile-draft-models-69c36153ea7084ce78329665"
    hub.add_collection(slug, "TokForge Mobile Draft Models", ["someone/fresh-draft-MNN"])
    refreshed = downloads.refresh_catalog()
    assert any(e.repo_id == "someone/fresh-draft-MNN" for e in refreshed.entries)
    downloads.add_repo("me/my-own-pack")
    downloads.add_repo("me/my-own-pack")  # once only
    assert load_settings().extra_repos == ["me/my-own-pack"]
    assert any(e.repo_id == "me/my-own-pack" for e in downloads.catalog().entries)
    for bad in ("../../etc", "no-owner", "a/b/c"):
        with pytest.raises(HubError, match="is not of the form owner/name"):
            downloads.add_repo(bad)
    plan = downloads.plan(REPO)
    assert plan.revision == hub.sha(REPO) and plan.folder_name == FOLDER


def test_the_queue_reports_every_change(downloads: Downloads) -> None:
    seen: list[str] = []
    unsubscribe = downloads.queue.subscribe(lambda: seen.append("change"))
    job = downloads.start(REPO)
    assert finish(downloads, job) == DONE
    assert len(seen) >= 3  # queued, planning, ..., done
    unsubscribe()
    count = len(seen)
    assert finish(downloads, downloads.start(REPO)) == DONE
    assert len(seen) == count


def test_every_download_ends_with_a_message_whatever_is_raised(
    downloads: Downloads, hub: FakeHub, tmp_path: Path
) -> None:
    # Repo ids the Hub client itself rejects (it raised, and the job stayed "planning").
    for bad in ("te st/x", "test/..", "a/b--c"):
        job = downloads.start(bad)
        assert finish(downloads, job) == FAILED
        assert "is not of the form owner/name" in job.status().error
    assert not hub.requests
    # A library that cannot be made: its parent is a regular file.
    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"")
    unusable = DownloadJob(REPO, blocker / "packs", HubConfig(endpoint=hub.endpoint, token=False))
    status = unusable.run()
    assert status.state == FAILED and str(blocker) in status.error
    # Anything else raised on the way still finishes the job, with what it was.
    broken = DownloadJob(
        REPO,
        downloads.root,
        HubConfig(endpoint=hub.endpoint, token=False),
        free_bytes=lambda path: 1 // 0,
    )
    status = broken.run()
    assert status.state == FAILED and "ZeroDivisionError" in status.error


def test_a_read_only_library_fails_with_a_message(hub: FakeHub, tmp_path: Path) -> None:
    library = tmp_path / "library"
    library.mkdir()
    with read_only_folder(library):
        status = DownloadJob(REPO, library, HubConfig(endpoint=hub.endpoint, token=False)).run()
    assert status.state == FAILED
    assert "not permitted" in status.error or "denied" in status.error
    assert REPO in status.error
