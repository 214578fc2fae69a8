"""What an export that did not end well leaves: a killed export's hidden partial folder
is removed at the next start (only a folder DraftDeck marked as its own, only once its
export is gone), and an export on a full disk says the disk is full, naming the folder,
instead of what the exporter tripped on next.

The exporter is a stand-in (stdlib Python in a fake export environment,
tests/helpers/export_env.fake_export_env): the commands and checks around it are real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.cli.main import main
from app.core.packmaking.export_checks import ExportRefused, ExportSettings, plan_export
from app.core.packmaking.export_env import EXPORT_ENV_VAR
from app.core.packmaking.export_partials import (
    PARTIAL_MARK,
    PartialRecord,
    records_folder,
    remove_abandoned,
)
from app.core.packmaking.export_run import FAILED, ExportJob
from tests.helpers.cli import APP
from tests.helpers.custom_code import LLAMA
from tests.helpers.export_env import fake_export_env

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX kill, tmpfs")
# The stand-in exporter: says it started, then works "forever".
SLOW_EXPORTER = "open('started', 'w').close()\nimport time\ntime.sleep(600)\n"
# Writes until the disk is full, then fails the way llmexport does on a full disk: on
# reading back a file it could not finish.
FILLING_EXPORTER = """
import json
try:
    with open('llm.onnx.data', 'wb') as out:
        while True:
            out.write(b'x' * 65536)
            out.flush()
except OSError:
    pass
open('export_args.json', 'w').close()
json.loads(open('export_args.json').read())
"""


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


@posix_only
def test_a_killed_exports_partial_folder_is_removed_at_the_next_start(
    tmp_path: Path, draftdeck_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = fake_export_env(tmp_path / "env", SLOW_EXPORTER, python=Path(sys.executable))
    out = tmp_path / "packs" / "pack"
    out.parent.mkdir()
    partial = out.parent / ".pack.draftdeck-partial"
    cli_env = {**os.environ, EXPORT_ENV_VAR: str(env.folder)}
    args = [str(LLAMA), "--out", str(out), "--block", "64", "--no-verify"]
    with subprocess.Popen(
        [*APP, "export", *args], env=cli_env, stderr=subprocess.PIPE, text=True
    ) as proc:
        _wait_for(partial / "started", proc)
        children = psutil.Process(proc.pid).children(recursive=True)
        for pid in [proc.pid, *(c.pid for c in children)]:  # a kill -9 of them all
            os.kill(pid, signal.SIGKILL)
        psutil.wait_procs(children, timeout=60)
    assert (partial / PARTIAL_MARK).is_file()  # what the kill left, as big as a model
    assert not out.exists()
    # The next start of an export (a refused one, even) removes it first.
    assert main(["export", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert not partial.exists()
    assert sorted(p.name for p in out.parent.iterdir()) == []
    assert list(records_folder().glob("*.json")) == []
    capsys.readouterr()


def test_only_draftdecks_partial_folders_of_exports_that_are_gone_are_removed(
    tmp_path: Path,
) -> None:
    records = tmp_path / "records"
    # A live export's partial folder: its lock is held.
    live = tmp_path / ".live.draftdeck-partial"
    live.mkdir()
    (live / PARTIAL_MARK).write_text("")
    holding = PartialRecord(live, records)
    holding.hold()
    # A record (its export gone) naming a folder DraftDeck did not mark: someone's own.
    foreign = tmp_path / "someones-folder"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    (records / "0000.json").write_text(json.dumps({"partial": str(foreign)}))
    # A record of a gone export whose marked folder is left.
    dead = tmp_path / ".dead.draftdeck-partial"
    dead.mkdir()
    (dead / PARTIAL_MARK).write_text("")
    (dead / "llm.mnn.weight").write_bytes(b"\0" * 1024)
    (records / "0001.json").write_text(json.dumps({"partial": str(dead)}))
    assert remove_abandoned(records) == [dead.absolute()]
    assert live.is_dir() and (foreign / "notes.txt").read_text() == "mine"
    assert not dead.exists()
    holding.release()
    assert remove_abandoned(records) == []  # released: its folder is no leftover
    assert live.is_dir() and list(records.glob("*.json")) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 100 MB tmpfs (as root); skipped where it cannot be mounted."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=100m", "tmpfs", str(folder)],
        capture_output=True,
    )
    if sys.platform == "win32" or mount.returncode != 0:
        pytest.skip("a small disk needs mount -t tmpfs (root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@posix_only
def test_an_export_that_fills_the_disk_says_the_disk_is_full(
    tmp_path: Path, small_disk: Path
) -> None:
    env = fake_export_env(tmp_path / "env", FILLING_EXPORTER, python=Path(sys.executable))
    out = small_disk / "pack"
    job = ExportJob(env, plan_export(LLAMA, out, ExportSettings(block=64)))
    status = job.run()
    assert status.state == FAILED
    assert f"{small_disk}: the disk is full" in status.error, status.error
    assert "JSONDecodeError" not in status.error
    assert list(small_disk.iterdir()) == []  # the partial folder went, and its space


def test_an_export_the_disk_has_no_room_for_is_refused_before_it_starts(
    tmp_path: Path, small_disk: Path
) -> None:
    big = tmp_path / "big-model"
    big.mkdir()
    for item in LLAMA.iterdir():
        (big / item.name).write_bytes(item.read_bytes())
    with (big / "model.safetensors").open("ab") as weights:  # 20 MB more weights
        weights.truncate(20 * 1024 * 1024)
    with pytest.raises(ExportRefused, match="not enough free space") as refused:
        plan_export(big, small_disk / "pack", ExportSettings(block=64))
    assert str(small_disk) in refused.value.message and refused.value.code == "disk_full"
