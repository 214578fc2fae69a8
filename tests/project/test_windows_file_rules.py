"""Downloads, installs, deletes and saves under Windows' file rules, on Linux.

Real downloads from the local Hub, real packs and recipes on disk; `WindowsRules`
(tests/helpers/windows_rules.py) makes deleting or renaming an open or mapped file,
renaming onto an existing file, deleting a read-only file and syncing a read-only
descriptor fail here as they fail on Windows. So the order of operations (close, then
delete or replace) is proven on every run, not only on a Windows machine.
"""

from __future__ import annotations

import json
import mmap
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.core.hub import transfer
from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.install import PART, prepare_staging, staging_dir
from app.core.hub.job import CANCELLED, DONE, FAILED, PAUSED, DownloadJob
from app.core.hub.transfer import CHUNK
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.core.recipe.files import RecipeDocument
from tests.helpers.paths import ROOT
from tests.helpers.windows_rules import WindowsRules, handles_under
from tests.hub_server import FakeHub

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="emulates Windows with /proc; on Windows the OS enforces the rules itself",
)

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
REPO = "darkmaniac7/Qwen3-0.6B-kl-baseline-20k-MNN"
BIG = "someone/big-pack-MNN"
BIG_SIZE = 4 * CHUNK + 12345
WEIGHT = "llm.mnn.weight"


@pytest.fixture
def rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[WindowsRules]:
    checked = WindowsRules()
    checked.install(monkeypatch)
    yield checked
    assert checked.violations == []


@pytest.fixture
def hub(fixture_bundle: Fixture) -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.add_folder(REPO, fixture_bundle("qwen3-draft-noisy"))
        yield server


@pytest.fixture
def big(hub: FakeHub) -> bytes:
    weight = random.Random(11).randbytes(BIG_SIZE)
    hub.add_repo(BIG, {"config.json": b'{"llm_model": "llm.mnn"}', WEIGHT: weight})
    return weight


@pytest.fixture
def library(draftdeck_home: Path) -> Path:
    return load_settings().library_path()


def _job(hub: FakeHub, library: Path, repo: str = REPO) -> DownloadJob:
    return DownloadJob(repo, library, HubConfig(endpoint=hub.endpoint, token=False))


def _read_only(path: Path) -> Path:
    path.chmod(0o444)
    return path


def test_the_rules_refuse_what_windows_refuses(tmp_path: Path, rules: WindowsRules) -> None:
    """The checker itself: without this, a broken checker would pass everything."""
    held, other = tmp_path / "held.bin", tmp_path / "other.bin"
    held.write_bytes(b"x" * 4096)
    other.write_bytes(b"y")
    with held.open("rb") as handle:
        with pytest.raises(PermissionError):
            held.unlink()
        with pytest.raises(PermissionError):
            held.replace(tmp_path / "moved.bin")
        with pytest.raises(OSError, match="read-only descriptor"):
            os.fsync(handle.fileno())
    with held.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ):
        handle.close()  # the mapping alone still holds the file
        with pytest.raises(PermissionError):
            held.unlink()
    with pytest.raises(FileExistsError):
        other.rename(held)
    with pytest.raises(PermissionError):
        _read_only(other).unlink()
    assert len(rules.violations) == 5 and len(rules.read_only_refused) == 1
    rules.violations.clear()
    other.chmod(0o644)
    other.replace(held)  # closed, writable, replace: all allowed
    held.unlink()
    assert handles_under(tmp_path) == []


def test_download_syncs_through_its_write_handle_as_it_goes(
    hub: FakeHub,
    library: Path,
    big: bytes,
    rules: WindowsRules,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transfer, "SYNC_EVERY", CHUNK)
    status = _job(hub, library, BIG).run()
    assert status.state == DONE, status.error
    assert (Path(status.path) / WEIGHT).read_bytes() == big
    periodic = [f for thread, f in rules.syncs if thread == "hasher" and f.endswith(WEIGHT + PART)]
    assert len(periodic) >= 3, rules.syncs  # one per CHUNK written, before the last
    assert rules.violations == []
    assert handles_under(library) == []


def test_cancel_and_pause_close_every_handle_before_deleting(
    hub: FakeHub, library: Path, big: bytes, rules: WindowsRules
) -> None:
    hub.throttle_bytes_per_s = 2 * CHUNK
    for action, expected in (("cancel", CANCELLED), ("pause", PAUSED)):
        job = _job(hub, library, BIG)
        thread = threading.Thread(target=job.run)
        thread.start()
        part = staging_dir(library, BIG) / "files" / (WEIGHT + PART)
        deadline = time.monotonic() + 20
        while not (part.exists() and part.stat().st_size >= CHUNK // 2):
            assert time.monotonic() < deadline, "the download never got going"
            time.sleep(0.01)
        getattr(job, action)()
        thread.join(20)
        assert job.status().state == expected
        assert handles_under(library) == []
        assert staging_dir(library, BIG).exists() == (action == "pause")
    job.cancel()  # a paused job cancelled from the window discards its part at once
    assert not staging_dir(library, BIG).exists()
    assert rules.violations == []


def test_server_ignoring_range_restarts_in_the_same_file(
    hub: FakeHub, library: Path, big: bytes, rules: WindowsRules
) -> None:
    hub.drop_after_bytes[WEIGHT] = CHUNK + 1000  # the first answer breaks off
    hub.ignore_range.add(WEIGHT)  # and the retry gets the whole file again
    status = _job(hub, library, BIG).run()
    assert status.state == DONE, status.error
    assert (Path(status.path) / WEIGHT).read_bytes() == big
    ranged = [r for _m, path, r in hub.requests if path.endswith(WEIGHT) and r]
    assert ranged, "the retry never asked for the rest"
    assert rules.violations == []


def test_corrupt_file_is_deleted_once_closed(
    hub: FakeHub, library: Path, rules: WindowsRules
) -> None:
    hub.corrupt.add(WEIGHT)
    status = _job(hub, library).run()
    assert status.state == FAILED and "do not match" in status.error
    assert not (staging_dir(library, REPO) / "files" / (WEIGHT + PART)).exists()
    assert rules.violations == []


def test_verified_file_replaces_a_leftover(
    hub: FakeHub, library: Path, fixture_bundle: Fixture, rules: WindowsRules
) -> None:
    plan = fetch_plan(HubConfig(endpoint=hub.endpoint, token=False), REPO)
    leftover = prepare_staging(library, plan) / "files" / "config.json"
    leftover.write_text("{}")  # same name, wrong size: fetched again, then in the way
    status = _job(hub, library).run()
    assert status.state == DONE, status.error
    shipped = fixture_bundle("qwen3-draft-noisy") / "config.json"
    assert (Path(status.path) / "config.json").read_bytes() == shipped.read_bytes()
    assert rules.violations == []


def test_update_sets_a_read_only_leftover_aside(
    hub: FakeHub, library: Path, fixture_bundle: Fixture, rules: WindowsRules
) -> None:
    # A leftover of an update that died before it carried the user's files across may
    # hold some of them: it is renamed out of the way, never deleted.
    pack = Path(_job(hub, library).run().path)
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    hub.add_repo(REPO, {**files, "README.md": b"v2\n"})
    leftover = library / f".replaced-{pack.name}" / "objects"
    leftover.mkdir(parents=True)
    (leftover / "pack-1.idx").write_bytes(b"index")
    _read_only(leftover / "pack-1.idx")
    status = _job(hub, library).run()
    assert status.state == DONE, status.error
    assert (pack / "README.md").read_text() == "v2\n"
    [kept] = [p for p in library.iterdir() if p != pack]
    assert kept.name.startswith(f".kept-{pack.name}-")
    assert (kept / "objects" / "pack-1.idx").read_bytes() == b"index"
    assert [p.name for p in Library(load_settings(), save_settings).scan()] == [pack.name]
    assert rules.violations == []


def test_removing_packs_with_read_only_files(bundle_copy: Copy, rules: WindowsRules) -> None:
    library = Library(load_settings(), save_settings)
    for name in ("first", "second"):
        pack = bundle_copy("qwen3-target", library.root / name)
        git = pack / ".git" / "objects"  # a pack cloned with git: its objects are read-only
        git.mkdir(parents=True)
        (git / "ab12").write_bytes(b"blob")
        _read_only(git / "ab12")
    stuck = library.root / ".deleting-second" / "objects"  # a delete that could not finish
    stuck.mkdir(parents=True)
    (stuck / "cd34").write_bytes(b"blob")
    _read_only(stuck / "cd34")
    for entry in library.scan():
        library.remove(entry)
    assert list(library.root.iterdir()) == []
    assert len(rules.read_only_refused) == 3  # each refused once, then made writable
    assert rules.violations == []


def test_saving_a_recipe_twice(bundle_copy: Copy, rules: WindowsRules) -> None:
    path = bundle_copy("qwen3-draft-noisy") / "config_cpu.json"
    doc = RecipeDocument.load(path)
    doc.save({**doc.data, "thread_num": 4})
    doc.save({**doc.data, "thread_num": 8})
    assert json.loads(path.read_text())["thread_num"] == 8
    assert json.loads(path.with_name(path.name + ".bak").read_text())["thread_num"] == 4
    settings = load_settings()
    save_settings(settings)
    save_settings(settings)  # the second replaces the first
    assert handles_under(path.parent) == []
    assert rules.violations == []


_READ_ONLY_TREES = """
import shutil, sys
from pathlib import Path
from app.core.infra.deletion import remove_tree

root = Path(sys.argv[1])
for name in ("plain", "ours"):
    objects = root / name / "objects"
    objects.mkdir(parents=True)
    (objects / "ab12").write_bytes(b"blob")
    (objects / "ab12").chmod(0o444)
    objects.chmod(0o555)  # POSIX: nothing inside a read-only folder can be deleted
try:
    shutil.rmtree(root / "plain")
    print("plain: removed")
except PermissionError:
    print("plain: refused")
(root / "plain" / "objects").chmod(0o755)
remove_tree(root / "ours")
print("ours: " + ("left" if (root / "ours").exists() else "removed"))
"""


def test_remove_tree_clears_read_only_folders() -> None:
    """POSIX's side of read-only, which permissions only show to a process they bind."""
    command = [sys.executable, "-c", _READ_ONLY_TREES]
    if os.geteuid() == 0:  # root ignores permissions unless it gives up its capabilities
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop the capabilities")
        command = [setpriv, "--inh-caps=-all", "--bounding-set=-all", *command]
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run(
            [*command, scratch], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split("\n")[:2] == ["plain: refused", "ours: removed"]
