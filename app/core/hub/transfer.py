"""One file from the Hub into a `.part` file: resumable, verified, cancellable.

huggingface_hub's own download restarts from zero after a restart and reports progress
every 10 MiB; this keeps what arrived in `<file>.part` and continues with a Range
request, hashes the file's bytes as they are written (read back from the file, the kept
prefix first when resuming, so memory stays flat whatever the hash's pace), and checks
the result against the LFS sha256 or the git blob id before the file is renamed into
place. It uses the client's URL builder, auth headers and HTTP session.

What the socket hands over (a few KiB at a time on a slow link) is gathered into writes
of up to CHUNK, but handed on at least every REPORT_EVERY seconds, so progress moves and
a pause lands between two reads, whatever the link's speed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import httpx2
from huggingface_hub import hf_hub_url
from huggingface_hub.utils._headers import build_hf_headers
from huggingface_hub.utils._http import get_session, hf_raise_for_status

from app.core.hub.hub_api import HubConfig, hub_errors, hub_timeout
from app.core.hub.plan import PlanFile
from app.core.infra.errors import DraftDeckError, HubError, WriteFailedError

# Bytes handed over per write: on a dropped connection at most this much is lost and
# fetched again. Large enough that per-chunk Python work stays off the throughput
# (64 KiB chunks ran at about 0.8 of snapshot_download on loopback; 1 MiB at parity).
CHUNK = 1024 * 1024
# Seconds between progress reports at most, while bytes arrive: at 40 KB/s a whole
# CHUNK took 25 s, and a 624 KB file showed "0 B" until it was done.
REPORT_EVERY = 0.25
SYNC_EVERY = 8 * 1024 * 1024
RETRIES = 5


class DownloadCancelled(DraftDeckError):
    """The user paused or cancelled; what arrived so far stays in the .part file."""


class _RangeIgnored(Exception):
    """The server sent the whole file instead of the rest."""


def _size_mismatch(what: str, got: str, plan_file: PlanFile) -> HubError:
    return HubError(
        f"{what}: the server sent {got} bytes, but the Hub lists {plan_file.size}; "
        "the file was discarded",
        "size_mismatch",
    )


class _Hasher:
    """Hashes the file's bytes, read back from the file, on its own thread.

    The socket reader writes each chunk to the file and only says how far the file now
    goes (`wrote`); this thread reads the new bytes back through a read handle of its
    own and hashes them. So no chunk waits in memory for the hash (a queue of chunks
    grew to 700 MiB on a 3 GB download whenever the hash and the syncs fell behind the
    network), the bytes hashed are the bytes the file holds, not the ones sent, and a
    resumed download's kept prefix is hashed while the rest arrives. Every SYNC_EVERY
    bytes it also asks the OS to write the file out (fdatasync), so the fsync before the
    rename finds little left to do and disk writes overlap the network. hashlib,
    reading and fdatasync release the GIL, so the threads really run side by side.

    It syncs through the writer's own descriptor, which it borrows: Windows can only
    flush a descriptor opened for writing (a read-only one of its own failed there, every
    time, so the periodic sync never happened). `hexdigest` and `close` join the thread,
    which closes its read handle, so call one before the writer closes that descriptor
    and before the file is deleted or renamed.
    """

    def __init__(self, plan_file: PlanFile, part: Path, write_fd: int, kept: int) -> None:
        self._digest = _new_digest(plan_file)
        self._part, self._fd = part, write_fd
        self._written = kept  # bytes in the file that may be hashed: the kept prefix first
        self._kept = kept  # an earlier run's bytes: no sync owed for them but the last
        self._hashed = 0
        self._unsynced = 0
        self._finished = False  # no more bytes will be written
        self._abandoned = False  # paused, failed or started over: the hash is not wanted
        self._failed: OSError | None = None
        self._news = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="hasher", daemon=True)
        self._thread.start()

    def wrote(self, count: int) -> None:
        """`count` more bytes are in the file (flushed to the OS) to hash."""
        if self._failed is not None:  # no use fetching the rest: it cannot be checked
            raise self._failed
        with self._news:
            self._written += count
            self._news.notify()

    def _work(self) -> None:
        try:
            with self._part.open("rb", buffering=0) as handle:
                while (upto := self._next_end()) is not None:
                    self._hash_up_to(handle, upto)
        except OSError as exc:
            self._failed = exc

    def _next_end(self) -> int | None:
        """Where the file's written bytes end, once there are new ones; None when done."""
        with self._news:
            while self._written == self._hashed and not self._finished:
                self._news.wait()
            done = self._written == self._hashed or self._abandoned
            return None if done else self._written

    def _hash_up_to(self, handle: BinaryIO, end: int) -> None:
        while self._hashed < end and not self._abandoned:
            block = handle.read(min(CHUNK, end - self._hashed))
            if not block:  # the file is shorter than written: the hash will not match
                raise OSError(f"{self._part.name} ended at {self._hashed} bytes")
            self._digest.update(block)
            self._hashed += len(block)
            if self._hashed > self._kept:
                self._unsynced += len(block)
            if self._unsynced >= SYNC_EVERY:
                self._unsynced = 0
                with contextlib.suppress(OSError):  # a file system without sync support
                    _datasync(self._fd)

    def close(self) -> None:
        """Stop without hashing the rest: a pause must not wait for a kept prefix."""
        self._abandoned = True
        self._join()

    def hexdigest(self) -> str:
        """The hash of every byte written, once the thread has read them all."""
        self._join()
        if self._failed is not None:
            raise self._failed
        return str(self._digest.hexdigest())

    def _join(self) -> None:
        with self._news:
            self._finished = True
            self._news.notify()
        self._thread.join()


def _new_digest(plan_file: PlanFile) -> Any:
    """The hash the Hub gives for this file, primed; hashlib has no common public type."""
    if plan_file.sha256:
        return hashlib.sha256()
    digest = hashlib.sha1()  # git's blob id is sha1 by definition
    digest.update(b"blob %d\0" % plan_file.size)
    return digest


def matches_on_disk(path: Path, plan_file: PlanFile) -> bool:
    """Whether the bytes in `path` now are the Hub's: size, then sha256 or git blob id.

    The streaming hash only vouches for the bytes this process sent to the file; this
    reads what the file holds, which is what gets installed.
    """
    try:
        if not path.is_file() or path.stat().st_size != plan_file.size:
            return False
        expected = _expected(plan_file)
        if expected is None:
            return True
        digest = _new_digest(plan_file)
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(CHUNK), b""):
                digest.update(block)
    except OSError:
        return False
    return str(digest.hexdigest()) == expected


def _datasync(fd: int) -> None:
    sync = getattr(os, "fdatasync", os.fsync)  # no fdatasync on macOS and Windows
    sync(fd)


def _expected(plan_file: PlanFile) -> str | None:
    return plan_file.sha256 or plan_file.blob_id


def _written(out: BinaryIO) -> int:
    """Bytes in the file so far, counting what `out` still buffers."""
    out.flush()
    return os.fstat(out.fileno()).st_size


def download_file(
    config: HubConfig,
    repo_id: str,
    revision: str,
    plan_file: PlanFile,
    part: Path,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Fill `part` with the file's bytes and verify them; raises HubError on mismatch.

    The file is open in one write handle for the whole download, and every handle on it
    is closed before it is deleted: Windows refuses to delete (or rename) an open file.
    """
    url = hf_hub_url(
        repo_id, plan_file.path, revision=revision, endpoint=config.resolved_endpoint()
    )
    headers = build_hf_headers(token=config.token)
    what = f"{repo_id}/{plan_file.path}"
    part.parent.mkdir(parents=True, exist_ok=True)
    if part.exists() and part.stat().st_size > plan_file.size:
        part.unlink()  # nothing of ours has it open yet
    try:
        with part.open("ab") as out:
            verified = _fill(url, headers, what, plan_file, part, out, on_bytes, cancelled, clock)
    except OSError as exc:
        raise WriteFailedError(part, f"could not write: {exc.strerror or exc}") from None
    except HubError as exc:
        if exc.code == "size_mismatch":
            part.unlink(missing_ok=True)  # only now: `out` and the hasher have let go of it
        raise
    if not verified:
        part.unlink()  # only now: `out` and the hasher have let go of it
        raise HubError(
            f"{what}: the downloaded bytes do not match the Hub's "
            f"{'sha256' if plan_file.sha256 else 'git blob id'}; the file was discarded",
            "corrupt",
        )


def _fill(
    url: str,
    headers: dict[str, str],
    what: str,
    plan_file: PlanFile,
    part: Path,
    out: BinaryIO,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
    clock: Callable[[], float],
) -> bool:
    """Append the missing bytes to `out` and sync them; whether they match the Hub's hash."""
    size = _written(out)
    receiver = _Receiver(out, _Hasher(plan_file, part, out.fileno(), size), on_bytes, clock)
    try:
        failures = 0
        while size < plan_file.size:
            request = dict(headers)
            if size:
                request["Range"] = f"bytes={size}-"
            try:
                size = _stream(url, request, receiver, size, cancelled, plan_file, what)
                failures = 0
            except _RangeIgnored:
                # Start again from byte 0 in the same file: emptied through our own
                # handle, as it could not be deleted while that handle is open (Windows).
                receiver.hasher.close()
                out.truncate(0)
                receiver.hasher, size = _Hasher(plan_file, part, out.fileno(), 0), 0
            except httpx2.TransportError as exc:
                # A dropped connection: go on from what arrived. Every byte written is
                # hashed from the file, so the file's size is where the next request starts. Only
                # drops in a row with nothing gained count towards giving up.
                before, size = size, _written(out)
                failures = 1 if size > before else failures + 1
                if failures > RETRIES:
                    raise HubError(
                        f"{what}: the connection keeps failing ({exc}); "
                        "start the download again to resume",
                        "connection_lost",
                    ) from None
                time.sleep(min(0.2 * failures, 2.0))
        out.flush()
        os.fsync(out.fileno())  # on disk before it is renamed into place
        expected = _expected(plan_file)
        return expected is None or receiver.hasher.hexdigest() == expected
    finally:
        receiver.hasher.close()  # before `out` closes: the hasher's thread syncs through it


class _Receiver:
    """Gathers the pieces a response yields into writes of up to CHUNK, and hands them
    to the file, the hasher and `on_bytes` when CHUNK is full or REPORT_EVERY has passed
    (so the bytes reported are always the bytes written)."""

    def __init__(
        self,
        out: BinaryIO,
        hasher: _Hasher,
        on_bytes: Callable[[int], None],
        clock: Callable[[], float],
    ) -> None:
        self.out, self.hasher = out, hasher
        self._on_bytes, self._clock = on_bytes, clock
        self._pending = bytearray()
        self._handed_at = clock()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def take(self, piece: bytes) -> int:
        """Keep `piece`; how many bytes were written now (0 while gathering)."""
        self._pending += piece
        now = self._clock()
        if len(self._pending) < CHUNK and now - self._handed_at < REPORT_EVERY:
            return 0
        self._handed_at = now
        return self.hand_over()

    def hand_over(self) -> int:
        """Write what is pending; how many bytes that was."""
        if not self._pending:
            return 0
        count = len(self._pending)
        self.out.write(self._pending)
        self.out.flush()  # in the file before the hasher reads it back
        self._pending.clear()
        self.hasher.wrote(count)
        self._on_bytes(count)
        return count


def _stream(
    url: str,
    headers: dict[str, str],
    receiver: _Receiver,
    size: int,
    cancelled: Callable[[], bool],
    plan_file: PlanFile,
    what: str,
) -> int:
    # Transport errors go to the caller's retry loop; HTTP errors become HubError.
    with get_session().stream(
        "GET", url, headers=headers, follow_redirects=True, timeout=hub_timeout()
    ) as response:
        if response.status_code == 416:  # the rest we asked for is past the server's end
            raise _size_mismatch(what, str(size), plan_file)
        with hub_errors(what):
            hf_raise_for_status(response)
        if size and response.status_code == 200:
            raise _RangeIgnored
        try:
            # Each piece as the socket gives it: a pause is seen between two reads.
            for piece in response.iter_bytes():
                if cancelled():
                    raise DownloadCancelled(what)
                if size + receiver.pending + len(piece) > plan_file.size:
                    # never more than listed: a full disk
                    raise _size_mismatch(what, "more than that", plan_file)
                size += receiver.take(piece)
        finally:
            # What arrived is kept, paused or dropped alike: a resume goes on after it.
            size += receiver.hand_over()
    return size
