"""A large file onto the phone through a shell command's stdin, so a cut keeps what came.

adbd deletes the file of a sync SEND that ends without DONE, so a copy cut at 50 % of
3 GB left nothing to resume from. Here `cat >> COPY` runs on the phone (shell protocol
v2, raw: no terminal, binary-safe) and appends each block as it arrives; after a cut
the copy holds a prefix of the file, which the next push checks and continues (see
large_files). The client sends stdin packets, then close-stdin, and reads cat's exit
status, so a full disk or a failed write is reported, not guessed.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from typing import Protocol

from app.core.infra.errors import PhoneError
from app.core.pack.sendable import SendableFile
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Phone, lost, read_v2_result
from app.core.phone.adb_wire import AdbRefused
from app.core.phone.sync_send import (
    SEND_BUFFER,
    SYNC_TIMEOUT,
    PushCancelled,
    read_block,
)

STDIN, CLOSE_STDIN = 0, 4  # shell protocol v2 packet ids (adb's shell_protocol.h)


class Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


def stream_file(
    phone: Phone,
    local: SendableFile,
    remote: str,
    start: int,
    digest: Digest,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> str:
    """Write `local` from byte `start` on to `remote` (appended when `start` > 0, else
    `remote` is written afresh); `digest` holds the first `start` bytes. The sha256 of
    the whole file."""
    handle = local.open()
    redirect = ">>" if start else ">"
    command = f"cat {redirect} {fs.quote(remote)}"
    with handle:
        handle.seek(start)
        try:
            with phone.connect(f"shell,v2,raw:{command}", SYNC_TIMEOUT) as conn:
                # As in sync_send: bytes counted as sent stay close to what the phone took.
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
                while block := read_block(handle, local.path):
                    if cancelled():
                        raise PushCancelled(remote)
                    digest.update(block)
                    conn.sock.sendall(bytes([STDIN]) + struct.pack("<I", len(block)) + block)
                    on_bytes(len(block))
                conn.sock.sendall(bytes([CLOSE_STDIN]) + struct.pack("<I", 0))
                result = read_v2_result(conn)  # cat has written everything and exited
        except (AdbRefused, OSError) as exc:
            raise lost(phone.name, exc) from exc
    if result.code != 0:
        message = result.err.strip() or result.out.strip() or f"exit status {result.code}"
        code = "no_space" if "No space" in message else "write_failed"
        raise PhoneError(f"{phone.name} could not write {remote}: {message}", code)
    return digest.hexdigest()
