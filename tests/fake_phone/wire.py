"""The adb wire protocol as a phone's adbd speaks it: 24-byte headers, one connection
per ``adb connect``, streams with OPEN/OKAY/WRTE/CLSE and one write in flight per
direction. Services are looked up on the phone (``FakePhone.service_handler``) and run
on a thread each."""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.fake_phone.phone import FakePhone

A_CNXN, A_AUTH, A_OPEN = 0x4E584E43, 0x48545541, 0x4E45504F
A_OKAY, A_CLSE, A_WRTE = 0x59414B4F, 0x45534C43, 0x45545257
A_VERSION = 0x01000001  # checksums are skipped from this version on
MAX_PAYLOAD = 256 * 1024
AUTH_TOKEN = 1
HEADER = struct.Struct("<6I")


class Cut(Exception):
    """The simulated cable was pulled."""


class Stream:
    """One open service stream: data in through a queue, data out one WRTE at a time."""

    def __init__(self, conn: Connection, local_id: int, remote_id: int) -> None:
        self.conn, self.local_id, self.remote_id = conn, local_id, remote_id
        # Unbounded: a reader blocked on a full inbox could not take the OKAY a writing
        # service waits for (adb clients pipeline sync requests).
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        self.acked = threading.Event()
        self.acked.set()
        self.closed = False
        self._buffer = b""

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            self.acked.wait()
            if self.closed or self.conn.dead:
                raise Cut
            self.acked.clear()
            chunk = bytes(view[: self.conn.max_payload])
            self.conn.send(A_WRTE, self.local_id, self.remote_id, chunk)
            view = view[len(chunk) :]

    def read(self, count: int) -> bytes:
        while len(self._buffer) < count:
            data = self.inbox.get()
            if data is None:
                raise Cut
            self._buffer += data
        out, self._buffer = self._buffer[:count], self._buffer[count:]
        return out

    def read_some(self) -> bytes:
        """Whatever came next; b"" once the stream closed."""
        if not self._buffer:
            data = self.inbox.get()
            if data is None:
                self.inbox.put(None)  # closed stays closed
                return b""
            self._buffer = data
        out, self._buffer = self._buffer, b""
        return out

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.acked.set()
            self.conn.send(A_CLSE, self.local_id, self.remote_id, b"")


class Connection:
    def __init__(self, phone: FakePhone, sock: socket.socket) -> None:
        self.phone, self.sock = phone, sock
        self.max_payload = MAX_PAYLOAD
        self.dead = False
        self.streams: dict[int, Stream] = {}
        self._next_id = 1
        self._send_lock = threading.Lock()

    def send(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        header = HEADER.pack(command, arg0, arg1, len(data), 0, command ^ 0xFFFFFFFF)
        with self._send_lock:
            if self.dead:
                raise Cut
            try:
                self.sock.sendall(header + data)
            except OSError as exc:
                raise Cut from exc

    def _recv_exact(self, count: int) -> bytes:
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise Cut
            data += chunk
        return bytes(data)

    def serve(self) -> None:
        try:
            while True:
                command, arg0, arg1, length, _check, _magic = HEADER.unpack(
                    self._recv_exact(HEADER.size)
                )
                self.handle(command, arg0, arg1, self._recv_exact(length) if length else b"")
        except (Cut, OSError):
            pass
        finally:
            self.drop()

    def drop(self) -> None:
        self.dead = True
        for stream in list(self.streams.values()):
            stream.closed = True
            stream.acked.set()
            stream.inbox.put(None)
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    def handle(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        phone = self.phone
        if command == A_CNXN:
            self.max_payload = min(MAX_PAYLOAD, arg1)
            if phone.authorized:
                self.send(A_CNXN, A_VERSION, MAX_PAYLOAD, phone.banner())
            else:
                self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
        elif command == A_AUTH:
            if arg0 != 3:  # a signature: refuse it with a new token; a public key: "prompt"
                self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))
        elif command == A_OPEN:
            service = data.rstrip(b"\0").decode("utf-8", "replace")
            local_id = self._next_id
            self._next_id += 1
            opened = Stream(self, local_id, arg0)
            handler = phone.service_handler(service)
            if handler is None:
                self.send(A_CLSE, 0, arg0, b"")
                return
            self.streams[local_id] = opened
            self.send(A_OKAY, local_id, arg0, b"")
            service_thread = threading.Thread(
                target=self._run_service, args=(opened, handler), daemon=True
            )
            service_thread.start()  # before settle() sees it: an unstarted thread cannot be joined
            phone.services.append((opened, service_thread))
            return
        stream = self.streams.get(arg1)
        if command == A_OKAY:
            if stream:
                stream.acked.set()
        elif command == A_WRTE:
            if stream is None:
                return
            phone.bytes_received += len(data)
            if phone.throttle_bytes_per_s:
                time.sleep(len(data) / phone.throttle_bytes_per_s)
            limit = phone.cut_after_bytes
            if limit is not None and phone.bytes_received >= limit:
                raise Cut
            stream.inbox.put(data)
            self.send(A_OKAY, stream.local_id, stream.remote_id, b"")
        elif command == A_CLSE:
            self.streams.pop(arg1, None)
            if stream is not None:
                stream.closed = True
                stream.acked.set()
                stream.inbox.put(None)

    def _run_service(self, stream: Stream, handler: Callable[[Stream], None]) -> None:
        try:
            handler(stream)
        except Cut:
            pass
        finally:
            with contextlib.suppress(Cut):
                stream.close()
            self.streams.pop(stream.local_id, None)
