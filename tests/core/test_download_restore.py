"""Downloads across quits, and what the service says of installed packs (issue 27 §3):
an interrupted download comes back paused in a new run, Clear Finished keeps what still
has files on disk, Discard removes only DraftDeck's own staging folder, an installed
and intact pack is not fetched again unless forced, and a typed repo can be removed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import pytest

from app.core.hub.downloads import INSTALLED, PARTIAL, Downloads
from app.core.hub.hub_api import HubConfig
from app.core.hub.install import staging_dir
from app.core.hub.job import CANCELLED, DONE, PAUSED, DownloadJob
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from tests.conftest import DRAFT_REPO
from tests.helpers.cli import run_cli
from tests.helpers.downloads import finish, wait_for
from tests.hub_server import FakeHub

REPO = DRAFT_REPO
FOLDER = "Qwen3-0.6B-kl-baseline-20k-MNN"
WEIGHT = "llm.mnn.weight"


@pytest.fixture
def next_run(hub: FakeHub) -> Iterator[Callable[[], Downloads]]:
    """A second service on the same library: DraftDeck started again."""
    made: list[Downloads] = []

    def start() -> Downloads:
        service = Downloads(
            Library(load_settings(), save_settings), HubConfig(endpoint=hub.endpoint, token=False)
        )
        made.append(service)
        return service

    yield start
    for service in made:
        service.shutdown()


def _paused_midway(downloads: Downloads, hub: FakeHub) -> DownloadJob:
    hub.throttle_bytes_per_s = 100_000
    job = downloads.start(REPO)
    wait_for(lambda: job.status().current_file == WEIGHT and job.status().file_done > 0)
    downloads.shutdown()  # what quitting does: every download pauses
    assert job.status().state == PAUSED
    hub.throttle_bytes_per_s = None
    return job


def test_an_interrupted_download_comes_back_paused_and_resumes(
    downloads: Downloads, hub: FakeHub, next_run: Callable[[], Downloads]
) -> None:
    before = _paused_midway(downloads, hub).status()
    again = next_run()
    assert again.jobs() == []  # nothing is listed until asked (the CLI never asks)
    assert again.marks() == {REPO: PARTIAL}  # the catalog row says a partial exists
    [job] = again.restore_interrupted()
    status = job.status()
    assert status.state == PAUSED and again.jobs() == [job]
    assert status.revision == hub.sha(REPO)
    assert status.total_bytes == before.total_bytes
    assert 0 < status.done_bytes == before.done_bytes < status.total_bytes
    assert status.files_done == before.files_done
    assert again.restore_interrupted() == []  # listed once
    served = dict(hub.bytes_served)
    hub.requests.clear()
    assert again.resume(job)
    assert finish(again, job) == DONE, job.status().error
    assert again.marks() == {REPO: INSTALLED}
    # What had arrived was not fetched again: the weight went on from its .part.
    assert hub.bytes_served["config.json"] == served["config.json"]
    ranges = [wanted for method, path, wanted in hub.requests if method == "GET" and WEIGHT in path]
    assert ranges and set(ranges) == {f"bytes={before.file_done}-"}


def test_clear_finished_keeps_paused_downloads_and_discard_removes_their_files(
    downloads: Downloads, hub: FakeHub, next_run: Callable[[], Downloads]
) -> None:
    _paused_midway(downloads, hub)
    again = next_run()
    [job] = again.restore_interrupted()
    failed = again.start("nobody/nothing")
    assert finish(again, failed) != DONE
    assert again.clear_finished() == [failed]  # paused is not finished
    assert again.jobs() == [job] and staging_dir(again.root, REPO).is_dir()
    again.cancel(job)  # Discard
    assert job.status().state == CANCELLED
    assert not staging_dir(again.root, REPO).exists()
    assert again.clear_finished() == [job]


def test_only_staging_folders_draftdeck_made_are_listed_or_removed(
    downloads: Downloads, hub: FakeHub, next_run: Callable[[], Downloads]
) -> None:
    _paused_midway(downloads, hub)
    root = downloads.root
    # Look like staging folders, but DraftDeck did not make them: no plan of ours, or a
    # plan naming another repo than the folder's name.
    foreign = staging_dir(root, "someone/own-stuff")
    (foreign / "files").mkdir(parents=True)
    (foreign / "files" / "keep.bin").write_bytes(b"mine")
    borrowed = staging_dir(root, "someone/borrowed")
    (borrowed / "files").mkdir(parents=True)
    plan = json.loads((staging_dir(root, REPO) / "plan.json").read_text())
    (borrowed / "plan.json").write_text(json.dumps(plan))
    again = next_run()
    assert [job.repo_id for job in again.restore_interrupted()] == [REPO]
    assert "someone/own-stuff" not in again.marks()
    again.cancel(again.jobs()[0])
    assert foreign.is_dir() and (foreign / "files" / "keep.bin").read_bytes() == b"mine"
    assert borrowed.is_dir()


def test_a_new_download_takes_over_from_a_paused_one(
    downloads: Downloads, hub: FakeHub, next_run: Callable[[], Downloads]
) -> None:
    _paused_midway(downloads, hub)
    again = next_run()
    [paused] = again.restore_interrupted()
    job = again.start(REPO)  # Download on the repo's row
    assert job is not paused and again.jobs() == [job]
    assert finish(again, job) == DONE, job.status().error


def test_an_installed_intact_pack_is_not_fetched_again_unless_forced(
    downloads: Downloads, hub: FakeHub
) -> None:
    first = downloads.start(REPO)
    assert finish(downloads, first) == DONE and not first.status().up_to_date
    pack = downloads.root / FOLDER
    check = downloads.verify(REPO)
    assert check is not None and check.intact and check.files == first.status().files_total
    assert check.summary() == f"All {check.files} files match the Hub's"
    # The user's edit of a recipe is theirs, not damage.
    recipe = pack / "config_cpu.json"
    recipe.write_text(recipe.read_text().replace("}", ', "thread_num": 1}'))
    hub.reset_counters()
    job = downloads.start(REPO)
    assert finish(downloads, job) == DONE
    assert job.status().up_to_date and job.status().path == str(pack)
    assert not hub.bytes_served  # nothing fetched
    check = downloads.verify(REPO)
    assert check is not None and check.intact and check.edited == ("config_cpu.json",)
    # A damaged or missing file is fetched again (Download repairs the pack).
    (pack / "tokenizer.mtok").write_bytes(b"broken")
    check = downloads.verify(REPO)
    assert check is not None and check.damaged == ("tokenizer.mtok",) and not check.intact
    assert "1 damaged: tokenizer.mtok; Re-download fetches them again" in check.summary()
    job = downloads.start(REPO)
    assert finish(downloads, job) == DONE and not job.status().up_to_date
    assert (pack / "tokenizer.mtok").read_bytes() == hub.file(REPO, "tokenizer.mtok").content
    # Forced: everything again, though it was intact.
    hub.reset_counters()
    job = downloads.start(REPO, force=True)
    assert finish(downloads, job) == DONE and not job.status().up_to_date
    assert hub.bytes_served[WEIGHT] == hub.file(REPO, WEIGHT).size


def test_a_typed_repo_can_be_removed(downloads: Downloads) -> None:
    downloads.add_repo("me/does-not-exist")
    assert any(e.repo_id == "me/does-not-exist" for e in downloads.catalog().entries)
    assert downloads.remove_repo("me/does-not-exist")
    assert load_settings().extra_repos == []  # also after a restart
    assert not any(e.repo_id == "me/does-not-exist" for e in downloads.catalog().entries)
    assert not downloads.remove_repo(REPO)  # curated: not the user's to remove


def test_cli_download_of_an_up_to_date_pack_says_so_and_fetches_nothing(hub: FakeHub) -> None:
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    first = run_cli("download", REPO, "--json", env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["up_to_date"] is False
    hub.reset_counters()
    again = run_cli("download", REPO, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"{REPO} is already installed and up to date in " in again.stdout
    assert "nothing was fetched (--force downloads it again)" in again.stdout
    assert not hub.bytes_served
    forced = run_cli("download", REPO, "--force", "--json", env=env, timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["up_to_date"] is False
    assert hub.bytes_served[WEIGHT] == hub.file(REPO, WEIGHT).size
