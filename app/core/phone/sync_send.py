"""One file to the phone over adb's sync protocol (SEND, DATA, DONE).

Our own loop instead of adbutils' `sync.push`, for three reasons: 64 KiB DATA
messages (the protocol maximum; adbutils sends 4 KiB ones), a progress callback per
message, and a cancel check between messages. A cancelled or cut SEND leaves no file:
the phone deletes what it got when the stream closes without DONE.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import adbutils

from app.core.errors import PhoneError, UnreadableFileError
from app.core.phone.adb import Phone, lost

SYNC_DATA_MAX = 64 * 1024
FILE_MODE = 0o100644  # a regular file, rw-r--r--


class PushCancelled(Exception):
    """The user stopped the copy; what is verified on the phone stays there."""


def send_file(
    phone: Phone,
    local: Path,
    remote: str,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> None:
    try:
        handle = local.open("rb")
    except OSError as exc:
        raise UnreadableFileError(local, exc.strerror or str(exc)) from exc
    with handle:
        _send(phone, handle, remote, on_bytes, cancelled)


def _send(
    phone: Phone,
    handle: BinaryIO,
    remote: str,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> None:
    conn = phone.open_sync()
    try:
        sock = conn.conn
        spec = f"{remote},{FILE_MODE}".encode()
        sock.sendall(b"SEND" + struct.pack("<I", len(spec)) + spec)
        while chunk := handle.read(SYNC_DATA_MAX):
            if cancelled():
                raise PushCancelled(remote)
            sock.sendall(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
            on_bytes(len(chunk))
        sock.sendall(b"DONE" + struct.pack("<I", int(time.time())))
        reply = conn.read(8)
        if len(reply) < 8:
            raise ConnectionResetError("the connection closed during the copy")
        if reply[:4] == b"FAIL":
            length = struct.unpack("<I", reply[4:])[0]
            message = conn.read(length).decode("utf-8", "replace")
            code = "no_space" if "No space" in message else "write_failed"
            raise PhoneError(f"{phone.serial} refused {remote}: {message}", code)
        if reply[:4] != b"OKAY":
            raise PhoneError(f"{phone.serial} answered {reply!r} to the copy of {remote}")
        sock.sendall(b"QUIT" + struct.pack("<I", 0))
    except (adbutils.AdbError, OSError) as exc:
        raise lost(phone.serial, exc) from exc
    finally:
        conn.close()
