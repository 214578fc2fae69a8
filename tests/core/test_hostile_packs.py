"""Packs whose files are not regular files: refused promptly with a message naming the
file, never a hang (a FIFO waits for a writer, /dev/zero never ends)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra import errors
from app.core.infra.jsonfile import read_regular_bytes
from app.core.pack.bundle import read_bundle
from app.core.pack.graph_facts import read_graph_facts
from app.core.pack.tokenizer_info import read_tokenizer_info
from tests.helpers.cli import APP
from tests.helpers.unprivileged import run_unprivileged

Copy = Callable[..., Path]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")


def _fifo_tokenizer(bundle_copy: Copy) -> tuple[Path, Path]:
    pack = bundle_copy("qwen3-target")
    tokenizer = pack / "tokenizer.mtok"
    tokenizer.unlink()
    os.mkfifo(tokenizer)
    return pack, tokenizer


def _zero_graph(bundle_copy: Copy) -> tuple[Path, Path]:
    pack = bundle_copy("qwen3-target")
    config = json.loads((pack / "config.json").read_text())
    config.pop("llm_model", None)  # MNN's default name: the link is not checked as a path
    (pack / "config.json").write_text(json.dumps(config))
    graph = pack / "llm.mnn"
    graph.unlink()
    graph.symlink_to("/dev/zero")
    return pack, graph


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*APP, *args], capture_output=True, text=True, timeout=60)


def test_fifo_tokenizer_is_refused_not_waited_on(bundle_copy: Copy) -> None:
    pack, tokenizer = _fifo_tokenizer(bundle_copy)
    with pytest.raises(errors.UnreadableFileError) as caught:
        read_bundle(pack)
    assert caught.value.path == tokenizer
    assert "named pipe" in caught.value.problem


def test_device_files_are_refused_by_every_reader(tmp_path: Path) -> None:
    zero = tmp_path / "tokenizer.mtok"
    zero.symlink_to("/dev/zero")
    with pytest.raises(errors.UnreadableFileError, match="device"):
        read_tokenizer_info(zero)
    with pytest.raises(errors.UnreadableFileError, match="device"):
        read_graph_facts(zero)
    with pytest.raises(errors.UnreadableFileError, match="folder"):
        read_regular_bytes(tmp_path, "tokenizer file")


def test_device_graph_is_refused(bundle_copy: Copy) -> None:
    pack, graph = _zero_graph(bundle_copy)
    with pytest.raises(errors.FileError) as caught:
        read_bundle(pack)
    assert caught.value.path == graph


_READ_IN_CHILD = """
import sys
from pathlib import Path
from app.core.infra import errors
from app.core.pack.bundle import read_bundle
try:
    read_bundle(Path(sys.argv[1]))
except errors.UnreadableFileError as exc:
    print(exc.path)
    print(exc)
"""


def test_unreadable_graph_is_a_message(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    (pack / "llm.mnn").chmod(0)
    proc = run_unprivileged(_READ_IN_CHILD, str(pack))
    assert proc.returncode == 0, proc.stderr
    path, message = proc.stdout.splitlines()
    assert path == str(pack / "llm.mnn") and "ermission denied" in message, message


@pytest.mark.parametrize("make", [_fifo_tokenizer, _zero_graph], ids=["fifo", "dev-zero"])
def test_info_and_check_answer_promptly(
    bundle_copy: Copy, make: Callable[[Copy], tuple[Path, Path]]
) -> None:
    pack, bad = make(bundle_copy)
    info = _run("info", str(pack))
    assert info.returncode != 0
    assert bad.name in info.stderr + info.stdout
    assert "Traceback" not in info.stderr
    good = bundle_copy("qwen3-draft-identical")
    check = _run("check", str(pack), str(good))
    assert check.returncode == 2
    assert bad.name in check.stderr + check.stdout
    assert "Traceback" not in check.stderr
