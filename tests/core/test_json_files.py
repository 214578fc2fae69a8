"""The shared JSON reader refuses what is not a regular file of sane size, and never hangs;
the cross-process file lock excludes other processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.errors import MissingFileError, UnreadableFileError
from app.core.infra.file_lock import exclusive_lock, try_lock, unlock
from app.core.infra.jsonfile import (
    JSON_SIZE_LIMIT,
    atomic_write_json,
    decode_text,
    read_json_object,
    read_regular_bytes,
)
from tests.helpers.cli import run_cli

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")


@needs_fifo
def test_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFileError, match="named pipe") as caught:
        read_json_object(fifo)
    assert caught.value.path == fifo


@needs_dev_zero
def test_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "config.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(UnreadableFileError, match="is a device"):
        read_json_object(link)


def test_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text('{"a": 1}', encoding="utf-8")
    link = tmp_path / "config.json"
    link.symlink_to(real)
    assert read_json_object(link) == {"a": 1}


def test_folder_and_missing_file_are_named(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFileError, match="folder"):
        read_json_object(tmp_path)
    with pytest.raises(MissingFileError):
        read_json_object(tmp_path / "absent.json")


def test_json_larger_than_the_limit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "config.json"
    with big.open("wb") as handle:
        handle.truncate(JSON_SIZE_LIMIT + 1)  # sparse: no disk space used
    with pytest.raises(UnreadableFileError, match="too large"):
        read_json_object(big)
    assert len(read_regular_bytes(big)) == JSON_SIZE_LIMIT + 1  # no limit asked: read


def test_read_regular_bytes_limit_and_decode(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"\xef\xbb\xbfhello")
    assert decode_text(read_regular_bytes(path, limit=8), path) == "hello"
    with pytest.raises(UnreadableFileError, match="too large"):
        read_regular_bytes(path, "notes", limit=7)
    with pytest.raises(UnreadableFileError, match="not UTF-8"):
        decode_text(b"abc\xff", path)


@needs_fifo
def test_info_on_a_pack_whose_config_is_a_fifo_returns(
    bundle_copy: Callable[..., Path],
) -> None:
    pack = bundle_copy("qwen3-target")
    (pack / "config.json").unlink()
    os.mkfifo(pack / "config.json")
    done = run_cli("info", str(pack), timeout=60)
    assert done.returncode != 0
    assert "config.json" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


@needs_dev_zero
def test_info_on_a_pack_whose_config_is_dev_zero_returns(
    bundle_copy: Callable[..., Path],
) -> None:
    pack = bundle_copy("qwen3-target")
    (pack / "config.json").unlink()
    (pack / "config.json").symlink_to("/dev/zero")
    done = run_cli("info", str(pack), timeout=60)
    assert done.returncode != 0
    assert "config.json" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


_HOLD_LOCK = """
import sys
from pathlib import Path
from app.core.infra.file_lock import exclusive_lock
with exclusive_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.readline()  # held until the test says so: no clock involved
"""


def _free(lock: Path) -> bool:
    """Whether this process could take the lock right now (it is let go at once)."""
    fd = os.open(lock, os.O_RDWR)
    try:
        taken = try_lock(fd)
        if taken:
            unlock(fd)
        return taken
    finally:
        os.close(fd)


def test_exclusive_lock_excludes_another_process_until_it_lets_go(tmp_path: Path) -> None:
    lock = tmp_path / "sub" / "thing.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None and holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    assert not _free(lock)  # held by the other process
    holder.stdin.write("go\n")
    holder.stdin.close()
    with exclusive_lock(lock):  # waits until the holder has let go
        assert holder.wait(timeout=30) == 0
    holder.stdout.close()
    assert _free(lock)  # and free again once released


def test_a_nan_is_never_written_and_the_old_file_stays(tmp_path: Path) -> None:
    """What parse_json refuses to read is not written: a store holding a NaN would be
    set aside whole at its next update."""
    path = tmp_path / "store.json"
    atomic_write_json(path, {"c": 0.5})
    for value in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="not JSON compliant"):
            atomic_write_json(path, {"c": value})
        assert read_json_object(path) == {"c": 0.5}
    assert [p.name for p in tmp_path.iterdir()] == ["store.json"]  # no temporary left
