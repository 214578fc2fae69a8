"""Files from strangers: a Hub repo naming its files like DraftDeck's own, or carrying
repo plumbing, and a repo listing 100,000 files — against the local Hub stand-in."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.job import DONE, FAILED, DownloadJob
from app.core.hub.plan import OWN_NAME_REASON, PLUMBING_REASON, PlanFile, build_plan, skip_reason
from app.core.infra.errors import HubError
from app.core.infra.settings import load_settings
from app.core.infra.units import format_bytes
from app.core.pack.files import SOURCE_FILE, installed_source
from tests.helpers.cli import run_cli
from tests.hub_server import FakeHub

Fixture = Callable[[str], Path]
OWN_NAMES = "stranger/own-names-MNN"
# What a stranger's repo may carry that DraftDeck would take for its own, or that is
# plumbing: each with the reason the plan gives.
STRANGERS = {
    ".draftdeck-pack.json": OWN_NAME_REASON,  # the phone's "DraftDeck made this folder"
    ".DraftDeck-Source.json": OWN_NAME_REASON,  # the same file as ours on Windows/macOS
    "config_cpu.json.bak": OWN_NAME_REASON,  # restored over the user's recipe
    "config.json.before-update": OWN_NAME_REASON,
    ".config_cpu.json.1a2b3c.tmp": OWN_NAME_REASON,  # a save's temp: the next save removes it
    ".draftdeck-original/config_cpu.json": OWN_NAME_REASON,
    ".git/config": PLUMBING_REASON,
    ".cache/huggingface/download/llm.mnn.lock": PLUMBING_REASON,
}
BIG = "stranger/big-listing-MNN"
BIG_COUNT = 100_000


def _config(hub: FakeHub) -> HubConfig:
    return HubConfig(endpoint=hub.endpoint, token=False)


def _pack_files(fixture_bundle: Fixture) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}


def big_listing() -> dict[str, bytes]:
    """BIG_COUNT tiny files of varied sizes, in folders of a thousand."""
    return {f"shard{i // 1000:03d}/f{i:06d}.txt": b"x" * (i % 13) for i in range(BIG_COUNT)}


def test_files_named_like_draftdecks_own_are_skipped_with_why(
    hub: FakeHub, fixture_bundle: Fixture, draftdeck_home: Path
) -> None:
    pack = _pack_files(fixture_bundle)
    hub.add_repo(OWN_NAMES, {**pack, **{n: b'{"repo": "evil/evil"}' for n in STRANGERS}})
    plan = fetch_plan(_config(hub), OWN_NAMES)
    assert {f.path for f in plan.files} == set(pack)
    assert {f.path: skip_reason(f.path) for f in plan.skipped} == STRANGERS

    status = DownloadJob(OWN_NAMES, load_settings().library_path(), _config(hub)).run()
    assert status.state == DONE, status.error
    installed = Path(status.path)
    names = {p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()}
    assert names == {*pack, SOURCE_FILE}
    assert (installed_source(installed) or {}).get("repo") == OWN_NAMES  # ours, not theirs
    assert sorted(status.skipped) == sorted(STRANGERS)


def test_download_cli_says_why_each_strangers_file_is_skipped(
    hub: FakeHub, fixture_bundle: Fixture
) -> None:
    hub.add_repo(OWN_NAMES, {**_pack_files(fixture_bundle), ".git/config": b"[core]\n"})
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    proc = run_cli("download", OWN_NAMES, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "skipped .git/config (repository plumbing, not part of a pack)" in proc.stderr


def test_a_hundred_thousand_hostile_names_are_refused_in_a_short_message(
    hub: FakeHub, draftdeck_home: Path
) -> None:
    hub.add_repo(BIG, {f"../up{i:06d}": b"" for i in range(BIG_COUNT)})
    status = DownloadJob(BIG, load_settings().library_path(), _config(hub)).run()
    assert status.state == FAILED
    assert "'../up000000'" in status.error and "and 99,995 more" in status.error
    assert "up099999" not in status.error  # not every name: a message, not a listing


@pytest.fixture(scope="module")
def big_hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.add_repo(BIG, {**big_listing(), "onnx/model.onnx": b"graph"})
        yield server


def test_download_list_names_the_first_files_and_counts_the_rest(big_hub: FakeHub) -> None:
    env = dict(os.environ, HF_ENDPOINT=big_hub.endpoint)
    proc = run_cli("download", BIG, "--list", env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    total = sum(len(c) for c in big_listing().values())
    revision = big_hub.sha(BIG)[:12]
    assert lines[0] == f"{BIG} at revision {revision}: 100,000 files, {format_bytes(total)}"
    assert lines[1].endswith("  shard000/f000000.txt")
    assert lines[21] == "… and 99,980 more files (--list-all lists them all)"
    assert lines[22] == (
        "skipped onnx/model.onnx (an export file no runtime reads; --all-files fetches it)"
    )
    assert len(lines) == 23

    proc = run_cli("download", BIG, "--list-all", env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 1 + BIG_COUNT + 1

    proc = run_cli("download", BIG, "--list", "--json", env=env, timeout=300)
    plan = json.loads(proc.stdout)
    assert len(plan["files"]) == BIG_COUNT and plan["bytes"] == total


def test_a_listing_that_names_a_file_twice_is_refused(hub: FakeHub) -> None:
    # Names that differ only in case are one file on Windows and macOS: which would it hold?
    hub.add_repo(OWN_NAMES, {"config.json": b"{}", "Config.JSON": b'{"llm_weight": "x"}'})
    with pytest.raises(HubError) as caught:
        fetch_plan(_config(hub), OWN_NAMES)
    assert "more than once" in str(caught.value) and "'config.json'" in str(caught.value)
    # The same name twice (the stand-in, like a dict, cannot list it; a Hub could).
    twice = [PlanFile("llm.mnn", 1, "a", None), PlanFile("llm.mnn", 2, "b", None)]
    with pytest.raises(HubError, match="more than once"):
        build_plan(OWN_NAMES, "0" * 40, twice)
