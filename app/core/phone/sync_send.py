"""One file to the phone over adb's sync protocol (SEND, DATA, DONE).

Our own loop instead of adbutils' `sync.push`: 64 KiB DATA messages (the protocol
maximum; adbutils sends 4 KiB ones), a progress callback and a cancel check per
message, and the file's sha256 computed from the very bytes sent (no second read).
A cancelled or cut SEND leaves no file: the phone deletes what it got when the stream
closes without DONE.
"""

from __future__ import annotations

import hashlib
import io
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from app.core.infra.errors import PhoneError, UnreadableFileError
from app.core.pack.sendable import SendableFile
from app.core.phone.adb import Phone, lost
from app.core.phone.adb_wire import AdbRefused, AdbSocket

SYNC_DATA_MAX = 64 * 1024
# Several DATA messages per write: the adb server forwards what one read of its socket
# gets as one packet and waits for the phone's ack before the next, so bigger writes
# mean fewer round trips (this doubled throughput over one message per write).
SEND_BLOCK = 4 * SYNC_DATA_MAX
SEND_BUFFER = 256 * 1024
FILE_MODE = 0o100644  # a regular file, rw-r--r--
SYNC_TIMEOUT = 60.0  # a phone that takes no data for a minute is gone


class PushCancelled(Exception):
    """The user stopped the copy; what is verified on the phone stays there."""


def send_file(
    phone: Phone,
    local: SendableFile,
    remote: str,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> str:
    """Copy the pack's file `local` to `remote`; the sha256 of what was sent."""
    digest = hashlib.sha256()
    with local.open() as handle:
        try:
            _send(phone, handle, local.path, remote, digest.update, on_bytes, cancelled)
        except (AdbRefused, OSError) as exc:
            raise lost(phone.name, exc) from exc
    return digest.hexdigest()


def send_bytes(phone: Phone, data: bytes, remote: str) -> None:
    """Write a small file made here (no local file behind it) to `remote`."""
    try:
        _send(phone, io.BytesIO(data), Path(remote), remote, _ignore, _ignore, lambda: False)
    except (AdbRefused, OSError) as exc:
        raise lost(phone.name, exc) from exc


def _ignore(_value: object) -> None:
    """No hashing and no progress for a small file."""


def _send(
    phone: Phone,
    handle: BinaryIO,
    local: Path,
    remote: str,
    hash_block: Callable[[bytes], None],
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> None:
    with phone.connect("sync:", SYNC_TIMEOUT) as conn:
        # A small send buffer keeps the bytes counted as sent close to the bytes the phone
        # has taken: with the default (megabytes between us and the adb server) the speed
        # shown started several times too high and the last seconds ran at "100 %".
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        spec = f"{remote},{FILE_MODE}".encode()
        conn.sock.sendall(b"SEND" + struct.pack("<I", len(spec)) + spec)
        while block := read_block(handle, local):
            if cancelled():
                raise PushCancelled(remote)
            hash_block(block)
            conn.sock.sendall(_data_messages(block))
            on_bytes(len(block))
        conn.sock.sendall(b"DONE" + struct.pack("<I", int(time.time())))
        _check_reply(phone, conn, remote)
        conn.sock.sendall(b"QUIT" + struct.pack("<I", 0))


def read_block(handle: BinaryIO, local: Path, size: int = SEND_BLOCK) -> bytes:
    """The next block; a failing disk is the computer's problem, not the cable's."""
    try:
        return handle.read(size)
    except OSError as exc:
        raise UnreadableFileError(local, exc.strerror or str(exc)) from exc


def _data_messages(block: bytes) -> bytes:
    view = memoryview(block)
    parts: list[bytes | memoryview] = []
    for start in range(0, len(block), SYNC_DATA_MAX):
        piece = view[start : start + SYNC_DATA_MAX]
        parts += [b"DATA", struct.pack("<I", len(piece)), piece]
    return b"".join(parts)


def _check_reply(phone: Phone, conn: AdbSocket, remote: str) -> None:
    reply = conn.read_exact(8)
    if reply[:4] == b"OKAY":
        return
    if reply[:4] == b"FAIL":
        length = struct.unpack("<I", reply[4:])[0]
        message = conn.read_exact(length).decode("utf-8", "replace")
        code = "no_space" if "No space" in message else "write_failed"
        raise PhoneError(f"{phone.name} refused {remote}: {message}", code)
    raise PhoneError(f"{phone.name} answered {reply!r} to the copy of {remote}")
