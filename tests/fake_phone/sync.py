"""The ``sync:`` service (STAT, LIST, SEND, RECV, QUIT). A SEND whose stream closes
without DONE leaves no file, as adbd deletes a failed SEND's file."""

from __future__ import annotations

import os
import posixpath
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from tests.fake_phone.wire import Stream

if TYPE_CHECKING:
    from tests.fake_phone.phone import FakePhone

SYNC_DATA_MAX = 64 * 1024


def serve_sync(phone: FakePhone, stream: Stream) -> None:
    """``sync:``: STAT, LIST, SEND, RECV until QUIT."""
    while True:
        request, length = struct.unpack("<4sI", stream.read(8))
        if request == b"QUIT":
            return
        path = stream.read(length).decode("utf-8", "replace")
        if request == b"STAT":
            stream.write(b"STAT" + _stat(phone, path))
        elif request == b"LIST":
            stream.write(_list(phone, path))
        elif request == b"SEND":
            stream.write(_receive_file(phone, stream, path))
        elif request == b"RECV":
            stream.write(_send_file(phone, path))
        else:
            message = f"unknown sync request {request!r}".encode()
            stream.write(b"FAIL" + struct.pack("<I", len(message)) + message)
            return


def _stat(phone: FakePhone, path: str) -> bytes:
    try:
        info = phone.local(path).stat()
    except OSError:
        return struct.pack("<III", 0, 0, 0)
    # Sync v1 sizes are 32-bit, as on real phones: a 5 GB file reports 5 GB mod 4 GiB.
    return struct.pack(
        "<III", info.st_mode, info.st_size & 0xFFFFFFFF, int(info.st_mtime) & 0xFFFFFFFF
    )


def _list(phone: FakePhone, path: str) -> bytes:
    folder = phone.local(path)
    out = b""
    names = sorted(os.listdir(folder)) if folder.is_dir() else []
    for name in [".", "..", *names]:
        raw = name.encode()
        out += b"DENT" + _stat(phone, posixpath.join(path, name)) + struct.pack("<I", len(raw))
        out += raw
    return out + b"DONE" + bytes(16)


def _receive_file(phone: FakePhone, stream: Stream, spec: str) -> bytes:
    path, _, _mode = spec.rpartition(",")
    target = phone.local(path)
    failure = ""
    written = 0
    handle = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = target.open("wb")
    except OSError as exc:
        failure = f"couldn't create file: {exc.strerror}"
    try:
        while True:
            kind, length = struct.unpack("<4sI", stream.read(8))
            if kind == b"DONE":
                break
            if kind != b"DATA" or length > SYNC_DATA_MAX:
                failure = failure or "invalid data message"
                break
            data = stream.read(length)
            if handle is None or failure:
                continue
            budget = phone.free_bytes
            if budget is not None and written + len(data) > budget:
                failure = "No space left on device"
                continue
            handle.write(data)
            written += len(data)
    finally:
        if handle is not None:
            handle.close()
            if failure or stream.closed:
                target.unlink(missing_ok=True)  # as adbd does on a failed SEND
    if phone.free_bytes is not None and not failure:
        phone.free_bytes -= written
    if not failure and written:
        _corrupt(phone, path, target)
    if failure:
        message = failure.encode()
        return b"FAIL" + struct.pack("<I", len(message)) + message
    return b"OKAY" + bytes(4)


def _corrupt(phone: FakePhone, path: str, target: Path) -> None:
    hit = next((name for name in phone.corrupt_files if name in path), None)
    if hit is None:
        return
    phone.corrupt_files.remove(hit)
    with target.open("r+b") as handle:
        handle.seek(target.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0xFF]))


def _send_file(phone: FakePhone, path: str) -> bytes:
    try:
        data = phone.local(path).read_bytes()
    except OSError as exc:
        message = f"open failed: {exc.strerror}".encode()
        return b"FAIL" + struct.pack("<I", len(message)) + message
    out = b""
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start : start + SYNC_DATA_MAX]
        out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
    return out + b"DONE" + bytes(4)
