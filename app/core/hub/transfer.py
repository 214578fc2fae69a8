"""One file from the Hub into a `.part` file: resumable, verified, cancellable.

huggingface_hub's own download restarts from zero after a restart and reports progress
every 10 MiB; this keeps what arrived in `<file>.part` and continues with a Range
request, hashes as it writes (hashing the kept prefix first when resuming), and checks
the result against the LFS sha256 or the git blob id before the file is renamed into
place. It uses the client's URL builder, auth headers and HTTP session.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from huggingface_hub import hf_hub_url
from huggingface_hub.utils._headers import build_hf_headers
from huggingface_hub.utils._http import get_session, hf_raise_for_status

from app.core.errors import DraftDeckError, HubError, WriteFailedError
from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import PlanFile

# Bytes handed over per write: on a dropped connection at most this much is lost and
# fetched again. Large enough that per-chunk Python work stays off the throughput
# (64 KiB chunks ran at about 0.8 of snapshot_download on loopback; 1 MiB at parity).
CHUNK = 1024 * 1024
SYNC_EVERY = 8 * 1024 * 1024
RETRIES = 5
TIMEOUT = httpx2.Timeout(30.0, connect=10.0)


class DownloadCancelled(DraftDeckError):
    """The user paused or cancelled; what arrived so far stays in the .part file."""


class _RangeIgnored(Exception):
    """The server sent the whole file instead of the rest."""


class _Hasher:
    """Hashes, and pushes written data to disk, on its own thread.

    The socket reader only appends to the file; this thread hashes what was written and
    every SYNC_EVERY bytes asks the OS to write the file out (fdatasync), so the fsync
    before the rename finds little left to do and disk writes overlap the network.
    hashlib and fdatasync release the GIL, so the two threads really run side by side.
    """

    def __init__(self, plan_file: PlanFile, part: Path) -> None:
        if plan_file.sha256:
            self._digest: Any = hashlib.sha256()
        else:
            self._digest = hashlib.sha1()  # git's blob id is sha1 by definition
            self._digest.update(b"blob %d\0" % plan_file.size)
        part.touch()
        self._fd = os.open(part, os.O_RDONLY)
        self._unsynced = 0
        self._chunks: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="hasher", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (chunk := self._chunks.get()) is not None:
            self._digest.update(chunk)
            self._unsynced += len(chunk)
            if self._unsynced >= SYNC_EVERY:
                self._unsynced = 0
                with contextlib.suppress(OSError):
                    _datasync(self._fd)

    def update(self, chunk: bytes) -> None:
        self._chunks.put(chunk)

    def close(self) -> None:
        if self._thread.is_alive():
            self._chunks.put(None)
            self._thread.join()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def hexdigest(self) -> str:
        self.close()
        return str(self._digest.hexdigest())


def _datasync(fd: int) -> None:
    sync = getattr(os, "fdatasync", os.fsync)  # no fdatasync on macOS and Windows
    sync(fd)


def _expected(plan_file: PlanFile) -> str | None:
    return plan_file.sha256 or plan_file.blob_id


def _hash_prefix(hasher: _Hasher, path: Path) -> None:
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)


def download_file(
    config: HubConfig,
    repo_id: str,
    revision: str,
    plan_file: PlanFile,
    part: Path,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> None:
    """Fill `part` with the file's bytes and verify them; raises HubError on mismatch."""
    url = hf_hub_url(
        repo_id, plan_file.path, revision=revision, endpoint=config.resolved_endpoint()
    )
    headers = build_hf_headers(token=config.token)
    what = f"{repo_id}/{plan_file.path}"
    part.parent.mkdir(parents=True, exist_ok=True)
    if part.exists() and part.stat().st_size > plan_file.size:
        part.unlink()
    size = part.stat().st_size if part.exists() else 0
    hasher = _Hasher(plan_file, part)
    try:
        if size:
            _hash_prefix(hasher, part)
        failures = 0
        while size < plan_file.size:
            request = dict(headers)
            if size:
                request["Range"] = f"bytes={size}-"
            try:
                size = _stream(url, request, part, size, hasher, on_bytes, cancelled, what)
                failures = 0
            except _RangeIgnored:
                part.unlink()
                hasher.close()
                hasher, size = _Hasher(plan_file, part), 0
            except httpx2.TransportError as exc:
                # A dropped connection: go on from what arrived. Every chunk written is
                # also hashed, so the file's size is where the next request starts.
                size = part.stat().st_size if part.exists() else 0
                failures += 1
                if failures > RETRIES:
                    raise HubError(
                        f"{what}: the connection keeps failing ({exc}); "
                        "start the download again to resume",
                        "connection_lost",
                    ) from None
                time.sleep(min(0.2 * failures, 2.0))
            except OSError as exc:
                raise WriteFailedError(part, f"could not write: {exc.strerror or exc}") from None
        if size != plan_file.size:
            raise HubError(f"{what}: got {size} bytes, expected {plan_file.size}", "size_mismatch")
        expected = _expected(plan_file)
        if expected is not None and hasher.hexdigest() != expected:
            part.unlink()
            raise HubError(
                f"{what}: the downloaded bytes do not match the Hub's "
                f"{'sha256' if plan_file.sha256 else 'git blob id'}; the file was discarded",
                "corrupt",
            )
    finally:
        hasher.close()


def _stream(
    url: str,
    headers: dict[str, str],
    part: Path,
    size: int,
    hasher: _Hasher,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
    what: str,
) -> int:
    # Transport errors go to the caller's retry loop; HTTP errors become HubError.
    with get_session().stream(
        "GET", url, headers=headers, follow_redirects=True, timeout=TIMEOUT
    ) as response:
        with hub_errors(what):
            hf_raise_for_status(response)
        if size and response.status_code == 200:
            raise _RangeIgnored
        with part.open("ab") as out:
            for chunk in response.iter_bytes(CHUNK):
                if cancelled():
                    raise DownloadCancelled(what)
                out.write(chunk)
                hasher.update(chunk)
                size += len(chunk)
                on_bytes(len(chunk))
            out.flush()
            os.fsync(out.fileno())
    return size
