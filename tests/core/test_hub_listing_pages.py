"""A repo's file list read page by page from the tree listing (as the Hub pages it), so
that no single answer is big enough to freeze the window while it is parsed: every file
exactly once, a page cut off once read again, a Hub that keeps cutting one off or stops
answering in the middle a clear message (exit 1, no traceback) — against the stand-in."""

from __future__ import annotations

import json
import os

import pytest

from app.core.hub.hub_api import TIMEOUT_VARIABLE, HubConfig, fetch_plan
from tests.helpers.cli import run_cli
from tests.hub_server import DEFAULT_TOKEN, TREE_PAGE, FakeHub

REPO = "stranger/paged-listing-MNN"
FOLDERS = 5
# More than two pages of entries (files and folders): the plan needs three requests.
COUNT = 2 * TREE_PAGE + 500


def _files() -> dict[str, bytes]:
    """COUNT small files in FOLDERS folders; every 100th is large enough to go by LFS."""
    return {
        f"part{i % FOLDERS}/f{i:05d}.txt": b"x" * (1500 if i % 100 == 0 else i % 13)
        for i in range(COUNT)
    }


def _tree_requests(hub: FakeHub) -> int:
    return sum(1 for _, path, _ in hub.requests if "/tree/" in path)


@pytest.fixture
def files(hub: FakeHub) -> dict[str, bytes]:
    made = _files()
    hub.add_repo(REPO, made)
    hub.reset_counters()
    return made


def _env(hub: FakeHub, seconds: str | None = None) -> dict[str, str]:
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_TOKEN": DEFAULT_TOKEN}
    if seconds is not None:
        env[TIMEOUT_VARIABLE] = seconds
    return env


def _assert_every_file_once(hub: FakeHub, files: dict[str, bytes]) -> None:
    plan = fetch_plan(HubConfig(endpoint=hub.endpoint, token=False), REPO)
    listed = [*plan.files, *plan.skipped]
    assert sorted(f.path for f in listed) == sorted(files)  # each once: a list, not a set
    assert plan.revision == hub.sha(REPO)
    for entry in listed:
        truth = hub.file(REPO, entry.path)
        assert (entry.size, entry.blob_id) == (truth.size, truth.blob_id), entry.path
        assert entry.sha256 == (truth.sha256 if truth.is_lfs else None), entry.path
    assert sum(f.sha256 is not None for f in listed) == COUNT // 100


def test_a_listing_longer_than_a_page_has_every_file_exactly_once(
    hub: FakeHub, files: dict[str, bytes]
) -> None:
    _assert_every_file_once(hub, files)
    entries = COUNT + FOLDERS
    assert _tree_requests(hub) == -(-entries // TREE_PAGE) == 3  # in pages, not one answer
    assert not any("blobs" in path for _, path, _ in hub.requests)


def test_a_page_cut_off_once_is_read_again_without_doubling_files(
    hub: FakeHub, files: dict[str, bytes]
) -> None:
    hub.drop_tree_pages[1] = 1
    _assert_every_file_once(hub, files)
    assert hub.drop_tree_pages[1] == 0  # the cut happened
    assert _tree_requests(hub) == 4  # the second page twice


def test_a_hub_that_keeps_cutting_off_the_listing_is_a_clear_message(
    hub: FakeHub, files: dict[str, bytes]
) -> None:
    hub.drop_tree_pages[1] = 1000
    # The client retries a cut connection 5 times with back-off (23 s in all).
    done = run_cli("download", REPO, "--list", "--json", env=_env(hub), timeout=180)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{REPO}: the connection to 127.0.0.1:" in done.stderr, done.stderr
    assert "broke off; check the network" in done.stderr, done.stderr
    assert done.stdout == ""
    assert _tree_requests(hub) == 1 + 6  # the first page, then the second six times


def test_a_hub_that_stops_answering_mid_listing_is_said_after_the_deadline(
    hub: FakeHub, files: dict[str, bytes]
) -> None:
    hub.stall_tree_pages.add(1)
    done = run_cli("download", REPO, "--list", "--json", env=_env(hub, "2"), timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{REPO}: 127.0.0.1:" in done.stderr, done.stderr
    assert "stopped answering (nothing for 2 s)" in done.stderr, done.stderr
    # The same listing from a Hub that answers is whole.
    hub.stall_tree_pages.clear()
    done = run_cli("download", REPO, "--list", "--json", env=_env(hub), timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["files"]) == COUNT
