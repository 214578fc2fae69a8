"""Downloads with the real huggingface_hub client against the local Hub stand-in."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.hub.catalog import load_catalog, refresh_live
from app.core.hub.hub_api import HubConfig, HubUnreachable, fetch_plan
from app.core.hub.install import staging_dir
from app.core.hub.job import CANCELLED, DONE, FAILED, PAUSED, DownloadJob
from app.core.hub.manager import DownloadManager
from app.core.hub.transfer import CHUNK
from app.core.hub.updates import check_update
from app.core.infra.errors import HubError
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.bundle import read_bundle
from app.core.pack.files import SOURCE_FILE
from app.core.pack.library import Library
from tests.conftest import DRAFT_REPO
from tests.helpers.cli import APP, run_cli
from tests.helpers.read_only import read_only_folder
from tests.hub_server import DEFAULT_TOKEN, FakeHub

Fixture = Callable[[str], Path]
REPO = DRAFT_REPO


@pytest.fixture
def library(draftdeck_home: Path) -> Path:
    return load_settings().library_path()


def _config(hub: FakeHub, token: str | None = None) -> HubConfig:
    # No token unless a test gives one: a token on the machine must not leak in.
    return HubConfig(endpoint=hub.endpoint, token=token or False)


def _job(
    hub: FakeHub, library: Path, free_bytes: Callable[[Path], int] | None = None
) -> DownloadJob:
    return DownloadJob(REPO, library, _config(hub), free_bytes=free_bytes)


def test_plan_has_sizes_and_hashes(hub: FakeHub, fixture_bundle: Fixture) -> None:
    plan = fetch_plan(_config(hub), REPO)
    assert plan.revision == hub.sha(REPO)
    names = {f.path for f in plan.files}
    assert names == {p.name for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    weight = next(f for f in plan.files if f.path == "llm.mnn.weight")
    assert weight.lfs and weight.sha256 == hub.file(REPO, "llm.mnn.weight").sha256
    config = next(f for f in plan.files if f.path == "config.json")
    assert not config.lfs and config.blob_id == hub.file(REPO, "config.json").blob_id


def test_download_installs_a_working_pack(
    hub: FakeHub, library: Path, fixture_bundle: Fixture
) -> None:
    status = _job(hub, library).run()
    assert status.state == DONE, status.error
    pack = Path(status.path)
    assert pack == library / "Qwen3-0.6B-kl-baseline-20k-MNN"
    for original in fixture_bundle("qwen3-draft-noisy").iterdir():
        assert (pack / original.name).read_bytes() == original.read_bytes()
    assert json.loads((pack / SOURCE_FILE).read_text())["revision"] == hub.sha(REPO)
    assert read_bundle(pack).vocab_size == 1280
    assert (
        status.done_bytes
        == status.total_bytes
        == sum(p.stat().st_size for p in fixture_bundle("qwen3-draft-noisy").iterdir())
    )
    assert not staging_dir(library, REPO).exists()
    entries = Library(load_settings(), save_settings).scan()
    assert [e.name for e in entries] == [pack.name] and entries[0].ok


def test_export_artifacts_are_skipped_unless_asked(hub: FakeHub, library: Path) -> None:
    files = {"config.json": b"{}", "onnx/llm.onnx": b"x" * 5000, "llm.onnx": b"y" * 10}
    hub.add_repo("someone/with-onnx", files)
    plan = fetch_plan(_config(hub), "someone/with-onnx")
    assert [f.path for f in plan.files] == ["config.json"]
    assert sorted(f.path for f in plan.skipped) == ["llm.onnx", "onnx/llm.onnx"]
    everything = fetch_plan(_config(hub), "someone/with-onnx", include_all=True)
    assert len(everything.files) == 3


GRAPH_DUMP = "someone/with-graph-dump-MNN"


def test_the_exporters_graph_dump_is_skipped_unless_asked(
    hub: FakeHub, fixture_bundle: Fixture
) -> None:
    # MNN's own exporter (3.1.x) leaves llm.mnn.json beside llm.mnn: 1-17 MB no runtime reads.
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    hub.add_repo(GRAPH_DUMP, {**files, "llm.mnn.json": b'{"oplists": []}' * 400})
    plan = fetch_plan(_config(hub), GRAPH_DUMP)
    assert [f.path for f in plan.skipped] == ["llm.mnn.json"]
    assert {f.path for f in plan.files} == set(files)
    everything = fetch_plan(_config(hub), GRAPH_DUMP, include_all=True)
    assert {f.path for f in everything.files} == {*files, "llm.mnn.json"}
    assert everything.skipped == ()


def test_download_cli_names_the_skipped_graph_dump(
    hub: FakeHub, library: Path, fixture_bundle: Fixture
) -> None:
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    hub.add_repo(GRAPH_DUMP, {**files, "llm.mnn.json": b"{}"})
    hub.add_repo("someone/all-of-it-MNN", {**files, "llm.mnn.json": b"{}"})
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    proc = run_cli("download", GRAPH_DUMP, "--json", env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "skipped llm.mnn.json (an export file no runtime reads; --all-files fetches it)" in (
        proc.stderr
    )
    result = json.loads(proc.stdout)
    assert result["skipped"] == ["llm.mnn.json"]
    pack = Path(result["path"])
    assert not (pack / "llm.mnn.json").exists() and read_bundle(pack).vocab_size == 1280
    proc = run_cli("download", "someone/all-of-it-MNN", "--all-files", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["skipped"] == []
    assert (library / "all-of-it-MNN" / "llm.mnn.json").read_bytes() == b"{}"


BIG = "someone/big-pack-MNN"
BIG_SIZE = 4 * CHUNK + 12345


@pytest.fixture
def big(hub: FakeHub) -> bytes:
    weight = random.Random(7).randbytes(BIG_SIZE)
    hub.add_repo(BIG, {"config.json": b'{"llm_model": "llm.mnn"}', "llm.mnn.weight": weight})
    return weight


def test_dropped_connection_resumes_without_refetching(
    hub: FakeHub, library: Path, big: bytes
) -> None:
    hub.drop_after_bytes["llm.mnn.weight"] = BIG_SIZE - CHUNK // 2
    status = DownloadJob(BIG, library, _config(hub)).run()
    assert status.state == DONE, status.error
    assert (Path(status.path) / "llm.mnn.weight").read_bytes() == big
    # The second request asked for the rest only; at most one chunk came twice.
    assert hub.bytes_served["llm.mnn.weight"] <= BIG_SIZE + CHUNK
    ranges = [r for method, path, r in hub.requests if path.endswith("llm.mnn.weight") and r]
    assert ranges and ranges[0].startswith("bytes=") and ranges[0] != "bytes=0-"


@pytest.mark.slow
def test_killed_process_resumes_where_it_stopped(hub: FakeHub, library: Path, big: bytes) -> None:
    hub.throttle_bytes_per_s = BIG_SIZE // 3  # about three seconds for the weight file
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    command = [*APP, "download", BIG, "--json"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    part = staging_dir(library, BIG) / "files" / "llm.mnn.weight.part"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (part.exists() and part.stat().st_size >= CHUNK):
        time.sleep(0.02)
    proc.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
    proc.communicate()
    kept = part.stat().st_size
    assert 0 < kept < BIG_SIZE
    hub.throttle_bytes_per_s = None
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout.strip().splitlines()[-1])
    assert {"repo", "revision", "path", "files", "bytes"} <= set(result)
    assert (Path(result["path"]) / "llm.mnn.weight").read_bytes() == big
    # What the killed process had written is not fetched again; only what was in
    # flight (less than a chunk, plus what the socket buffers held) comes twice.
    assert hub.bytes_served["llm.mnn.weight"] <= BIG_SIZE + 2 * CHUNK
    assert not staging_dir(library, BIG).exists()


def test_corrupt_file_is_rejected_and_nothing_installed(hub: FakeHub, library: Path) -> None:
    hub.corrupt.add("llm.mnn.weight")
    job = _job(hub, library)
    status = job.run()
    assert status.state == FAILED
    assert "do not match the Hub's sha256" in status.error
    assert Library(load_settings(), save_settings).scan() == []
    assert not (staging_dir(library, REPO) / "files" / "llm.mnn.weight.part").exists()
    # Retry once the server is fixed: verified files are not fetched again.
    served_config = hub.bytes_served["config.json"]
    hub.corrupt.clear()
    job.restart()
    assert job.run().state == DONE
    assert hub.bytes_served["config.json"] == served_config


def test_only_verified_bytes_on_disk_are_installed(
    hub: FakeHub, library: Path, fixture_bundle: Fixture
) -> None:
    hub.corrupt.add("llm.mnn.weight")
    job = _job(hub, library)
    assert job.run().state == FAILED
    # A kept file changed on disk since it was verified (same size, other bytes).
    kept = staging_dir(library, REPO) / "files" / "config.json"
    kept.write_bytes(bytes(len(kept.read_bytes())))
    hub.corrupt.clear()
    job.restart()
    status = job.run()
    assert status.state == DONE, status.error
    original = (fixture_bundle("qwen3-draft-noisy") / "config.json").read_bytes()
    assert (Path(status.path) / "config.json").read_bytes() == original


def test_hostile_names_are_refused(hub: FakeHub, library: Path) -> None:
    hub.hostile_names[REPO] = ["../evil.txt", "/etc/passwd"]
    status = _job(hub, library).run()
    assert status.state == FAILED and "refused file names" in status.error
    assert "../evil.txt" in status.error
    assert not library.exists() or not any(library.iterdir())
    assert not (library.parent / "evil.txt").exists()


def test_not_enough_disk_space_is_refused(hub: FakeHub, library: Path) -> None:
    status = _job(hub, library, free_bytes=lambda path: 10_000).run()
    assert status.state == FAILED
    assert "not enough free disk space" in status.error and "missing" in status.error
    assert not hub.bytes_served


def test_cancel_leaves_nothing_and_pause_resumes(hub: FakeHub, library: Path) -> None:
    hub.throttle_bytes_per_s = 100_000
    for action, expected in (("cancel", CANCELLED), ("pause", PAUSED)):
        job = _job(hub, library)
        thread = threading.Thread(target=job.run)
        thread.start()
        deadline = time.monotonic() + 60  # a guard against a hang, not a speed limit
        while job.status().done_bytes < 20_000 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert job.status().done_bytes >= 20_000, "the download never got going"
        getattr(job, action)()
        thread.join(60)
        assert job.status().state == expected
        assert Library(load_settings(), save_settings).scan() == []
        assert staging_dir(library, REPO).exists() == (action == "pause")
    hub.throttle_bytes_per_s = None
    served = sum(hub.bytes_served.values())
    job.restart()
    assert job.run().state == DONE
    total = job.status().total_bytes
    assert sum(hub.bytes_served.values()) - served < total  # the paused part was kept


def test_update_detection_and_update(hub: FakeHub, library: Path, fixture_bundle: Fixture) -> None:
    pack = Path(_job(hub, library).run().path)
    info = check_update(_config(hub), pack)
    assert info is not None and not info.available
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    files["README.md"] = b"v2\n"
    new_sha = hub.add_repo(REPO, files)
    info = check_update(_config(hub), pack)
    assert info is not None and info.available and info.latest == new_sha
    status = _job(hub, library).run()
    assert status.state == DONE and (pack / "README.md").read_text() == "v2\n"
    assert json.loads((pack / SOURCE_FILE).read_text())["revision"] == new_sha
    assert check_update(_config(hub), fixture_bundle("qwen3-target")) is None


def test_private_repo_needs_the_token(hub: FakeHub, library: Path, fixture_bundle: Fixture) -> None:
    hub.add_folder("me/private-pack", fixture_bundle("qwen3-draft-identical"), private=True)
    denied = DownloadJob("me/private-pack", library, _config(hub)).run()
    assert denied.state == FAILED and "repository not found" in denied.error
    assert "HF_TOKEN" in denied.error
    allowed = DownloadJob("me/private-pack", library, _config(hub, DEFAULT_TOKEN)).run()
    assert allowed.state == DONE, allowed.error


def test_unknown_repo(hub: FakeHub, library: Path) -> None:
    status = DownloadJob("nobody/nothing", library, _config(hub)).run()
    assert status.state == FAILED and "repository not found" in status.error


def test_catalog_lists_collection_and_works_offline(hub: FakeHub) -> None:
    offline = load_catalog()
    assert offline.age_seconds() is None
    assert any(e.repo_id == REPO and e.source == "curated" for e in offline.entries)
    slug = "darkmaniac7/tokforge-mobile-draft-models-69c36153ea7084ce78329665"
    hub.add_collection(slug, "TokForge Mobile Draft Models", [REPO, "someone/new-draft-MNN"])
    hub.add_repo("someone/new-draft-MNN", {"config.json": b"{}"})
    live = refresh_live(_config(hub))
    added = next(e for e in live.entries if e.repo_id == "someone/new-draft-MNN")
    assert added.source == "collection: TokForge Mobile Draft Models"
    age = live.age_seconds()
    assert age is not None and age < 60
    # Later, without the Hub, the cached listing is still there.
    assert any(e.repo_id == "someone/new-draft-MNN" for e in load_catalog().entries)


def test_parallel_downloads_with_the_manager(
    hub: FakeHub, library: Path, fixture_bundle: Fixture
) -> None:
    hub.add_folder("me/second-pack", fixture_bundle("qwen3-draft-independent"))
    manager = DownloadManager()
    jobs = [_job(hub, library), DownloadJob("me/second-pack", library, _config(hub))]
    for job in jobs:
        manager.submit(job)
    for job in jobs:
        manager.wait(job, timeout=60)
    assert [job.status().state for job in jobs] == [DONE, DONE]
    manager.shutdown()
    assert sorted(p.name for p in library.iterdir()) == [
        "Qwen3-0.6B-kl-baseline-20k-MNN",
        "second-pack",
    ]


def test_cli_download_failure_message(hub: FakeHub, library: Path) -> None:
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    proc = run_cli("download", "nobody/nothing", env=env, timeout=60)
    assert proc.returncode == 1
    assert "repository not found" in proc.stderr


def test_progress_per_file_and_overall(hub: FakeHub, library: Path, big: bytes) -> None:
    hub.throttle_bytes_per_s = BIG_SIZE // 2
    job = DownloadJob(BIG, library, _config(hub))
    seen = []
    thread = threading.Thread(target=job.run)
    thread.start()
    while thread.is_alive():
        status = job.status()
        if status.current_file == "llm.mnn.weight" and status.file_done:
            seen.append(status)
        time.sleep(0.05)
    thread.join()
    assert seen, "progress of the large file was never seen"
    middle = seen[len(seen) // 2]
    assert middle.file_size == BIG_SIZE and 0 < middle.file_done <= BIG_SIZE
    assert middle.done_bytes >= middle.file_done and middle.total_bytes > BIG_SIZE
    assert any(s.speed > 0 for s in seen)
    assert any(s.eta_seconds for s in seen)
    # Bytes only grow and the speed never beats the server's cap (a busy machine can only
    # make it slower: no lower bound). Speed and time left by hand, on a fake clock, in
    # test_job_cells.py.
    assert all(a.done_bytes <= b.done_bytes for a, b in itertools.pairwise(seen))
    speeds = sorted(s.speed for s in seen if s.speed)
    assert speeds[len(speeds) // 2] < 1.5 * hub.throttle_bytes_per_s


def test_cli_download_bad_repo_ids_and_unusable_library(hub: FakeHub, draftdeck_home: Path) -> None:
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    for bad in ("test/..", "te st/x", "../x", "no-owner"):
        proc = run_cli("download", bad, env=env, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert "is not of the form owner/name" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert not hub.requests
    # The library's folder cannot be made (a regular file is in the way; root can write
    # into read-only folders, so a file is the check that holds for every user).
    draftdeck_home.mkdir(parents=True, exist_ok=True)
    (draftdeck_home / "data").write_bytes(b"")
    proc = run_cli("download", REPO, env=env, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "did not finish" in proc.stderr and str(draftdeck_home / "data") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_download_into_a_read_only_home(hub: FakeHub, draftdeck_home: Path) -> None:
    draftdeck_home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    with read_only_folder(draftdeck_home):
        proc = run_cli("download", REPO, env=env, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "did not finish" in proc.stderr and "Traceback" not in proc.stderr


def test_hub_errors_name_the_collection_by_title_and_the_host_in_plain_words(
    hub: FakeHub,
) -> None:
    with pytest.raises(HubError) as missing:
        refresh_live(_config(hub))  # the stand-in lists no collection
    assert missing.value.message == (
        "the collection “TokForge Mobile Draft Models”: the Hub refused (HTTP 404 Not Found)"
    )
    with pytest.raises(HubUnreachable) as dns:
        refresh_live(HubConfig(endpoint="http://nohost.invalid"))
    assert dns.value.message == (
        "the collection “TokForge Mobile Draft Models”: no connection to nohost.invalid "
        "(the Hub endpoint set); check the network"
    )
    assert dns.value.code == "unreachable" and dns.value.reason  # kept for the log
    assert HubConfig(endpoint="https://huggingface.co").place() == "huggingface.co"
