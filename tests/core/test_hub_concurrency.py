"""Two `draftdeck download` processes of the same repo at once, against the local Hub."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from app.core.hub.install import staging_dir
from app.core.hub.repo_lock import RepoLock
from app.core.infra.settings import load_settings
from tests.helpers.cli import APP
from tests.hub_server import FakeHub

REPO = "someone/contended-pack-MNN"
SIZE = 3 * 1024 * 1024 + 4321


def test_two_processes_downloading_one_repo_install_it_once(
    hub: FakeHub, draftdeck_home: Path
) -> None:
    weight = random.Random(18).randbytes(SIZE)
    hub.add_repo(REPO, {"config.json": b'{"llm_model": "llm.mnn"}', "llm.mnn.weight": weight})
    hub.throttle_bytes_per_s = SIZE // 2  # about two seconds: the two overlap
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint)
    command = [*APP, "download", REPO, "--json"]
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.3)
    second = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results = [proc.communicate(timeout=120) for proc in (first, second)]
    for proc, (out, err) in zip((first, second), results, strict=True):
        assert proc.returncode == 0, err.decode()
        installed = Path(json.loads(out.decode().strip().splitlines()[-1])["path"])
    library = load_settings().library_path()
    assert installed == library / "contended-pack-MNN"
    data = (installed / "llm.mnn.weight").read_bytes()
    assert len(data) == SIZE
    assert hashlib.sha256(data).hexdigest() == hashlib.sha256(weight).hexdigest()
    assert not staging_dir(library, REPO).exists()
    # The second waited for the first and found the pack installed: fetched once.
    assert hub.bytes_served["llm.mnn.weight"] <= SIZE + 1024 * 1024


def test_repo_lock_excludes_a_second_holder_and_keeps_the_library_clean(tmp_path: Path) -> None:
    library = tmp_path / "library"
    library.mkdir()
    first, second = RepoLock(library, REPO), RepoLock(library, REPO)
    assert first.try_acquire() and first.held
    assert not second.try_acquire() and not second.held
    assert RepoLock(library, "someone/other").try_acquire()  # per repo
    first.release()
    assert list(library.iterdir()) == []  # the lock lives in the cache, not the library
    assert second.try_acquire()
    second.release()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from app.core.hub.repo_lock import RepoLock; "
            f"assert RepoLock(Path(sys.argv[1]), {REPO!r}).try_acquire(); "
            "print('held', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    lock = RepoLock(tmp_path, REPO)
    assert not lock.try_acquire()
    holder.kill()  # SIGKILL: no release ran
    holder.communicate()
    assert lock.try_acquire()
    lock.release()
