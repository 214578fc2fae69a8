"""`draftdeck publish` against a Hub stand-in that fails (tests/hub_upload.py's faults):
a Hub that stops answering, a 500 on a large file's PUT, a connection cut in the middle
of one, a commit whose answer is lost. Each ends in a message (exit 1, no traceback) that
says how far the upload got, and publishing again to a healthy Hub completes it."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.hub.hub_api import TIMEOUT_VARIABLE
from app.core.hub.publish import SMALL_FILE
from tests import hub_upload
from tests.helpers.cli import run_cli
from tests.hub_server import DEFAULT_TOKEN, FakeHub

Copy = Callable[..., Path]
REPO = "maker/Qwen3-tiny-draft-MNN"
LARGE = "weights-2.bin"


@pytest.fixture
def env(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The child publishes to the stand-in, giving up after 2 s of silence; as on the Hub
    (10 MB), only the large file takes the LFS path (batch, PUT to the cdn)."""
    monkeypatch.setattr(hub_upload, "LFS_THRESHOLD", SMALL_FILE - 1)
    return {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": DEFAULT_TOKEN,
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        TIMEOUT_VARIABLE: "2",
    }


@pytest.fixture
def pack(bundle_copy: Copy) -> Path:
    """A pack the stand-in does not hold yet, with one large file (sent on its own)."""
    folder = bundle_copy("qwen3-draft-independent")
    (folder / LARGE).write_bytes(os.urandom(SMALL_FILE))
    return folder


def _publish(pack: Path, env: dict[str, str]) -> tuple[int, str]:
    done = run_cli("publish", str(pack), REPO, env=env, timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr


def _completes_on_a_healthy_hub(hub: FakeHub, pack: Path, env: dict[str, str]) -> None:
    upload = hub_upload.state(hub)
    upload.stall.clear()
    upload.fail_puts = upload.drop_puts = False
    # With the usual deadline: a loaded machine may keep a healthy answer for a while.
    code, said = _publish(pack, {k: v for k, v in env.items() if k != TIMEOUT_VARIABLE})
    assert code == 0, said
    names = [p.name for p in pack.iterdir() if p.is_file()]
    for name in names:
        local = hashlib.sha256((pack / name).read_bytes()).hexdigest()
        assert hub.file(REPO, name).sha256 == local, name


def _says_it_stopped_at_the_large_file(said: str) -> None:
    assert f"It stopped while sending {LARGE}, after 6 of 7 files" in said, said
    assert f"Nothing was committed, so {REPO} is as it was: publish again to finish" in said


def test_a_hub_that_stops_answering_is_said_and_publishing_again_completes(
    hub: FakeHub, env: dict[str, str], pack: Path
) -> None:
    hub_upload.state(hub).stall.add("put")  # takes the large file, then never answers
    code, said = _publish(pack, env)
    assert code == 1, said
    assert "stopped answering (nothing for 2 s)" in said, said
    _says_it_stopped_at_the_large_file(said)
    assert hub_upload.state(hub).commits == []
    _completes_on_a_healthy_hub(hub, pack, env)


def test_a_500_on_the_large_files_put_is_said_and_publishing_again_completes(
    hub: FakeHub, env: dict[str, str], pack: Path
) -> None:
    hub_upload.state(hub).fail_puts = True
    code, said = _publish(pack, env)
    assert code == 1, said
    assert "the Hub refused (HTTP 500 Internal Server Error)" in said, said
    _says_it_stopped_at_the_large_file(said)
    assert hub_upload.state(hub).puts_started > 1  # the client's own retries came first
    _completes_on_a_healthy_hub(hub, pack, env)


def test_a_connection_cut_mid_put_is_said_and_publishing_again_completes(
    hub: FakeHub, env: dict[str, str], pack: Path
) -> None:
    hub_upload.state(hub).drop_puts = True
    code, said = _publish(pack, env)
    assert code == 1, said
    assert "the connection to 127.0.0.1" in said and "broke off" in said, said
    _says_it_stopped_at_the_large_file(said)
    _completes_on_a_healthy_hub(hub, pack, env)


def test_a_commit_whose_answer_is_lost_is_said_and_publishing_again_finds_it_done(
    hub: FakeHub, env: dict[str, str], pack: Path
) -> None:
    upload = hub_upload.state(hub)
    upload.stall.add("committed")  # the commit is made, its answer never comes
    code, said = _publish(pack, env)
    assert code == 1, said
    assert "All 7 files were sent; it stopped at the commit" in said, said
    assert "publish again to finish" in said
    _completes_on_a_healthy_hub(hub, pack, env)
    assert len(upload.commits) == 1  # nothing had changed: no second commit
