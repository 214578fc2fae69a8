"""Memory a download holds while its hash falls behind (issue 31: chunks waiting for the
hasher piled up in a queue, 707 MiB on a 3 GB download, 684 MiB on a resume whose kept
prefix went into the same queue).

No timing: the hasher is held still until every byte has arrived, the worst case a slow
hash or slow syncs can make, and the test counts the bytes Python holds (tracemalloc's
peak), not RSS or seconds. Real files, the Hub stand-in on loopback, the real client.
"""

from __future__ import annotations

import io
import random
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.hub import transfer
from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.job import DONE, FAILED, DownloadJob
from app.core.hub.plan import PlanFile
from app.core.hub.transfer import CHUNK, download_file
from app.core.infra.errors import HubError
from tests.hub_server import FakeHub

REPO = "someone/big-pack-MNN"
WEIGHT = "llm.mnn.weight"
SIZE = 24 * CHUNK + 4321
# What may be in memory at once whatever the hash's pace: the bytes gathered for one
# write, the hasher's one read, the client's socket buffers. Far below SIZE.
HELD_AT_MOST = 4 * CHUNK


@pytest.fixture
def content() -> bytes:
    return random.Random(31).randbytes(SIZE)


@pytest.fixture
def hub(content: bytes) -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.add_repo(REPO, {"config.json": b'{"llm_model": "llm.mnn"}', WEIGHT: content})
        yield server


def _config(hub: FakeHub) -> HubConfig:
    return HubConfig(endpoint=hub.endpoint, token=False)


def _weight(hub: FakeHub) -> tuple[str, PlanFile]:
    plan = fetch_plan(_config(hub), REPO)
    return plan.revision, next(f for f in plan.files if f.path == WEIGHT)


class _HeldDigest:
    """A digest that hashes nothing until `released` is set."""

    def __init__(self, inner: Any, released: threading.Event) -> None:
        self._inner, self._released = inner, released

    def update(self, data: bytes) -> None:
        self._released.wait(timeout=60)  # only a guard against a hang: never reached
        self._inner.update(data)

    def hexdigest(self) -> str:
        return str(self._inner.hexdigest())


def _hold_the_hash(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    released = threading.Event()
    make = transfer._new_digest
    monkeypatch.setattr(transfer, "_new_digest", lambda f: _HeldDigest(make(f), released))
    return released


def _peak_held_while(fetch: Callable[[], None]) -> int:
    """The most bytes Python held at once while `fetch` ran, above what it held before."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fetch()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kept", [0, SIZE // 2], ids=["fresh", "resumed"])
def test_bytes_held_stay_bounded_while_the_hash_falls_behind(
    hub: FakeHub, content: bytes, kept: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revision, weight = _weight(hub)
    part = tmp_path / (WEIGHT + ".part")
    part.write_bytes(content[:kept])  # what an earlier run kept
    released = _hold_the_hash(monkeypatch)
    arrived: list[int] = []

    def on_bytes(count: int) -> None:
        arrived.append(count)
        if sum(arrived) == SIZE - kept:
            released.set()  # every byte is in: now the hash may catch up

    def fetch() -> None:
        download_file(_config(hub), REPO, revision, weight, part, on_bytes, lambda: False)

    held = _peak_held_while(fetch)
    assert part.read_bytes() == content  # verified, all of it
    assert released.is_set()  # the bytes arrived with the hash held still
    # Before: every chunk (and the kept prefix) waited in the hasher's queue.
    assert held < HELD_AT_MOST, f"{held:,} bytes held for a {SIZE:,}-byte file"


class _FaultyDisk(io.BufferedWriter):
    """A writer whose disk flips one bit of the first byte written: the bytes sent
    were right, the bytes the file holds are not."""

    flipped = False

    def write(self, data: Any) -> int:
        if not _FaultyDisk.flipped:
            _FaultyDisk.flipped = True
            spoilt = bytearray(data)
            spoilt[0] ^= 0x01
            return super().write(spoilt)
        return super().write(data)


def _faulty_disk_for(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    real_open = Path.open

    def open_(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if path.name == name and mode == "ab":
            return _FaultyDisk(io.FileIO(path, "ab"))
        return real_open(path, mode, *args, **kwargs)

    _FaultyDisk.flipped = False
    monkeypatch.setattr(Path, "open", open_)


def test_the_hash_is_of_the_bytes_on_disk_not_the_bytes_sent(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revision, weight = _weight(hub)
    part = tmp_path / (WEIGHT + ".part")
    _faulty_disk_for(monkeypatch, part.name)
    with pytest.raises(HubError, match="do not match") as raised:
        download_file(_config(hub), REPO, revision, weight, part, lambda n: None, lambda: False)
    assert raised.value.code == "corrupt" and not part.exists()


def test_a_download_spoilt_on_disk_is_never_installed(
    hub: FakeHub, content: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The job no longer reads every file a second time before installing: this is why.
    library = tmp_path / "library"
    _faulty_disk_for(monkeypatch, WEIGHT + ".part")
    status = DownloadJob(REPO, library, _config(hub)).run()
    assert status.state == FAILED and "match the Hub" in status.error
    assert [p.name for p in library.iterdir() if not p.name.startswith(".")] == []
    status = DownloadJob(REPO, library, _config(hub)).run()  # the disk behaves again
    assert status.state == DONE, status.error
    assert (Path(status.path) / WEIGHT).read_bytes() == content
