"""A fake Android phone for tests: it speaks the adb *device* protocol over TCP.

A real adb server (the one bundled with adbutils, on an isolated port) attaches to it
with ``adb connect 127.0.0.1:PORT``, exactly as it would to a phone with wireless
debugging, so everything above the wire (the adb server, adbutils, the ``adb`` command
line) is real. The phone's storage is a sandbox folder: device path ``/a/b`` is
``root/a/b``.

Protocol (system/core/adb/protocol.txt): 24-byte little-endian headers
(command, arg0, arg1, length, checksum, magic); CNXN without AUTH (or, when not
authorized, AUTH tokens that are never accepted, so the server shows "unauthorized");
streams with OPEN/OKAY/WRTE/CLSE and one write in flight per direction (flow control).
Services: ``shell:`` (v1), ``shell,v2,...:`` (packets with exit codes) and ``sync:``
(STAT, LIST, SEND, RECV, QUIT). A mini shell understands ``getprop``, ``df -k``,
``ls [-l] [-a] [-d]``, ``mkdir -p``, ``mv``, ``rm [-rf]``, ``sha256sum``, ``cat`` and
``echo``, joined by ``;`` or ``&&``, with ``> FILE`` and ``>> FILE``. A v2 shell's
stdin comes in stdin packets until a close-stdin packet (as adbd's ``shell,v2,raw:``
passes them on); ``cat`` without files copies it block by block as it arrives, so a
cut leaves what came, as toybox's cat under mksh does. A write beyond ``free_bytes``
fails with toybox's ``xwrite: No space left on device``.

Switches (plain attributes, may change while it runs): ``free_bytes`` (what ``df``
reports and what writes may use), ``cut_after_bytes`` (drop the connection once that
many bytes of data arrived), ``unplugged`` (refuse connections),
``throttle_bytes_per_s`` (a slower cable), ``missing_commands`` (an older toybox),
``command_delay`` (seconds a command takes, by name), ``corrupt_files`` (a received
file whose path contains one of these strings gets one byte flipped, as a bad cable
would; each entry is used once), ``case_insensitive_storage`` (on by default: under
``/sdcard`` names match whatever their case, as on a phone). ``ls -la`` lists ``.``,
``..`` and symlink targets as toybox does. ``shell_v2=False`` makes an
Android 6 phone, whose v1 shell mixes stderr into stdout and reports no exit status.
Counter:
``bytes_received``. ``settle()`` waits until every service has ended (a phone's end on
their own once a client stopped or the cable is gone).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import queue
import shlex
import shutil
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

__all__ = ["FakePhone"]

A_CNXN, A_AUTH, A_OPEN = 0x4E584E43, 0x48545541, 0x4E45504F
A_OKAY, A_CLSE, A_WRTE = 0x59414B4F, 0x45534C43, 0x45545257
A_VERSION = 0x01000001  # checksums are skipped from this version on
MAX_PAYLOAD = 256 * 1024
AUTH_TOKEN = 1
SYNC_DATA_MAX = 64 * 1024
_HEADER = struct.Struct("<6I")
SHELL_STDIN, SHELL_CLOSE_STDIN = 0, 4  # shell protocol v2 packet ids (shell_protocol.h)


class _Cut(Exception):
    """The simulated cable was pulled."""


class _NoSpace(Exception):
    """A write went past the phone's free space (ENOSPC)."""


class _Stream:
    """One open service stream: data in through a queue, data out one WRTE at a time."""

    def __init__(self, conn: _Connection, local_id: int, remote_id: int) -> None:
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
                raise _Cut
            self.acked.clear()
            chunk = bytes(view[: self.conn.max_payload])
            self.conn.send(A_WRTE, self.local_id, self.remote_id, chunk)
            view = view[len(chunk) :]

    def read(self, count: int) -> bytes:
        while len(self._buffer) < count:
            data = self.inbox.get()
            if data is None:
                raise _Cut
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


class _Connection:
    def __init__(self, phone: FakePhone, sock: socket.socket) -> None:
        self.phone, self.sock = phone, sock
        self.max_payload = MAX_PAYLOAD
        self.dead = False
        self.streams: dict[int, _Stream] = {}
        self._next_id = 1
        self._send_lock = threading.Lock()

    def send(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        header = _HEADER.pack(command, arg0, arg1, len(data), 0, command ^ 0xFFFFFFFF)
        with self._send_lock:
            if self.dead:
                raise _Cut
            try:
                self.sock.sendall(header + data)
            except OSError as exc:
                raise _Cut from exc

    def _recv_exact(self, count: int) -> bytes:
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise _Cut
            data += chunk
        return bytes(data)

    def serve(self) -> None:
        try:
            while True:
                command, arg0, arg1, length, _check, _magic = _HEADER.unpack(
                    self._recv_exact(_HEADER.size)
                )
                self.handle(command, arg0, arg1, self._recv_exact(length) if length else b"")
        except (_Cut, OSError):
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
            opened = _Stream(self, local_id, arg0)
            handler = phone.service_handler(service)
            if handler is None:
                self.send(A_CLSE, 0, arg0, b"")
                return
            self.streams[local_id] = opened
            self.send(A_OKAY, local_id, arg0, b"")
            service_thread = threading.Thread(
                target=self._run_service, args=(opened, handler), daemon=True
            )
            phone.services.append((opened, service_thread))
            service_thread.start()
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
                raise _Cut
            stream.inbox.put(data)
            self.send(A_OKAY, stream.local_id, stream.remote_id, b"")
        elif command == A_CLSE:
            self.streams.pop(arg1, None)
            if stream is not None:
                stream.closed = True
                stream.acked.set()
                stream.inbox.put(None)

    def _run_service(self, stream: _Stream, handler: Callable[[_Stream], None]) -> None:
        try:
            handler(stream)
        except _Cut:
            pass
        finally:
            with contextlib.suppress(_Cut):
                stream.close()
            self.streams.pop(stream.local_id, None)


class FakePhone:
    """A phone on 127.0.0.1:``port`` whose storage is ``root``."""

    def __init__(
        self,
        root: Path,
        model: str = "Pixel 8",
        android: str = "15",
        abi: str = "arm64-v8a",
        ram_kb: int = 7_864_320,
        authorized: bool = True,
        shell_v2: bool = True,
    ) -> None:
        self.root = root
        self.authorized = authorized
        self.shell_v2 = shell_v2
        self.props = {
            "ro.product.model": model,
            "ro.product.name": model.lower().replace(" ", "_"),
            "ro.product.device": model.lower().replace(" ", ""),
            "ro.build.version.release": android,
            "ro.build.version.sdk": "35",
            "ro.product.cpu.abi": abi,
        }
        self.free_bytes: int | None = None
        self.cut_after_bytes: int | None = None
        self.throttle_bytes_per_s: float | None = None
        self.missing_commands: set[str] = set()
        self.command_delay: dict[str, float] = {}
        self.corrupt_files: list[str] = []
        # Shared storage (/sdcard) on a real phone is case-insensitive (FUSE/sdcardfs):
        # /sdcard/music is the user's /sdcard/Music.
        self.case_insensitive_storage = True
        self.unplugged = False
        self.bytes_received = 0
        self.commands: list[str] = []
        self.services: list[tuple[_Stream, threading.Thread]] = []
        (root / "proc").mkdir(parents=True, exist_ok=True)
        (root / "proc" / "meminfo").write_text(f"MemTotal:       {ram_kb} kB\n")
        (root / "data" / "local" / "tmp").mkdir(parents=True, exist_ok=True)
        (root / "sdcard" / "Download").mkdir(parents=True, exist_ok=True)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._connections: list[_Connection] = []
        self._stopped = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> FakePhone:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._stopped = True
        self._listener.close()
        self.cut()
        self._thread.join(timeout=5)

    def cut(self) -> None:
        """Pull the cable: every open connection drops at once."""
        for conn in list(self._connections):
            conn.drop()
        self._connections.clear()

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until every service started so far has ended: after a client stopped or
        a cut, the adb server may still be passing on the last blocks of a stream, which
        a `cat` then writes (`timeout` guards against a hang)."""
        for _stream, thread in list(self.services):
            thread.join(timeout)
        self.services = [(s, t) for s, t in self.services if t.is_alive()]

    def _accept(self) -> None:
        while not self._stopped:
            try:
                sock, _addr = self._listener.accept()
            except OSError:
                return
            if self.unplugged:
                sock.close()
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(self, sock)
            self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: _Connection) -> None:
        conn.serve()
        if conn in self._connections:
            self._connections.remove(conn)
        if self.cut_after_bytes is not None and self.bytes_received >= self.cut_after_bytes:
            self.unplugged = True  # stays unplugged until the test plugs it back in

    def banner(self) -> bytes:
        keys = ("ro.product.name", "ro.product.model", "ro.product.device")
        props = "".join(f"{key}={self.props[key]};" for key in keys)
        features = "shell_v2,fixed_push_mkdir" if self.shell_v2 else "fixed_push_mkdir"
        return f"device::{props}features={features}".encode()

    # -- storage -------------------------------------------------------------------------

    def local(self, device_path: str) -> Path:
        """The sandbox path of a device path (never outside the sandbox); under /sdcard
        a name matches an existing entry whatever its case, as on a phone."""
        normal = posixpath.normpath(posixpath.join("/", device_path))
        parts = normal.lstrip("/").split("/")
        if not (self.case_insensitive_storage and parts[0] == "sdcard"):
            return self.root / normal.lstrip("/")
        path = self.root / "sdcard"
        for part in parts[1:]:
            if not (path / part).exists() and path.is_dir():
                part = next((n for n in os.listdir(path) if n.lower() == part.lower()), part)
            path = path / part
        return path

    def _free(self) -> int:
        if self.free_bytes is not None:
            return self.free_bytes
        return shutil.disk_usage(self.root).free

    # -- services ------------------------------------------------------------------------

    def service_handler(self, service: str) -> Callable[[_Stream], None] | None:
        if service.startswith("shell"):
            head, _, command = service.partition(":")
            v2 = "v2" in head.split(",")
            if v2 and not self.shell_v2:
                return None  # Android before 7: the service does not exist
            return lambda stream: self._shell_service(stream, command, v2)
        if service == "sync:":
            return self._sync_service
        return None

    def _shell_service(self, stream: _Stream, command: str, v2: bool) -> None:
        self.commands.append(command)
        out, err, code, mixed = Shell(self, _ShellInput(stream, v2)).run(command)
        if not v2:
            stream.write(mixed)
            return
        packets = b""
        for kind, data in ((1, out), (2, err)):
            if data:
                packets += bytes([kind]) + struct.pack("<I", len(data)) + data
        stream.write(packets + bytes([3]) + struct.pack("<I", 1) + bytes([code & 0xFF]))

    def _sync_service(self, stream: _Stream) -> None:
        while True:
            request, length = struct.unpack("<4sI", stream.read(8))
            if request == b"QUIT":
                return
            path = stream.read(length).decode("utf-8", "replace")
            if request == b"STAT":
                stream.write(b"STAT" + self._stat(path))
            elif request == b"LIST":
                stream.write(self._list(path))
            elif request == b"SEND":
                stream.write(self._receive_file(stream, path))
            elif request == b"RECV":
                stream.write(self._send_file(path))
            else:
                message = f"unknown sync request {request!r}".encode()
                stream.write(b"FAIL" + struct.pack("<I", len(message)) + message)
                return

    def _stat(self, path: str) -> bytes:
        try:
            info = self.local(path).stat()
        except OSError:
            return struct.pack("<III", 0, 0, 0)
        # Sync v1 sizes are 32-bit, as on real phones: a 5 GB file reports 5 GB mod 4 GiB.
        return struct.pack(
            "<III", info.st_mode, info.st_size & 0xFFFFFFFF, int(info.st_mtime) & 0xFFFFFFFF
        )

    def _list(self, path: str) -> bytes:
        folder = self.local(path)
        out = b""
        names = sorted(os.listdir(folder)) if folder.is_dir() else []
        for name in [".", "..", *names]:
            raw = name.encode()
            out += b"DENT" + self._stat(posixpath.join(path, name)) + struct.pack("<I", len(raw))
            out += raw
        return out + b"DONE" + bytes(16)

    def _receive_file(self, stream: _Stream, spec: str) -> bytes:
        path, _, _mode = spec.rpartition(",")
        target = self.local(path)
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
                budget = self.free_bytes
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
        if self.free_bytes is not None and not failure:
            self.free_bytes -= written
        if not failure and written:
            self._corrupt(path, target)
        if failure:
            message = failure.encode()
            return b"FAIL" + struct.pack("<I", len(message)) + message
        return b"OKAY" + bytes(4)

    def _corrupt(self, path: str, target: Path) -> None:
        hit = next((name for name in self.corrupt_files if name in path), None)
        if hit is None:
            return
        self.corrupt_files.remove(hit)
        with target.open("r+b") as handle:
            handle.seek(target.stat().st_size // 2)
            byte = handle.read(1)
            handle.seek(-1, os.SEEK_CUR)
            handle.write(bytes([byte[0] ^ 0xFF]))

    def _send_file(self, path: str) -> bytes:
        try:
            data = self.local(path).read_bytes()
        except OSError as exc:
            message = f"open failed: {exc.strerror}".encode()
            return b"FAIL" + struct.pack("<I", len(message)) + message
        out = b""
        for start in range(0, len(data), SYNC_DATA_MAX):
            chunk = data[start : start + SYNC_DATA_MAX]
            out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
        return out + b"DONE" + bytes(4)


class _ShellInput:
    """A shell command's stdin. Shell protocol v2: stdin packets until close-stdin (other
    packets, such as a window size, are skipped). v1 has no such packets: everything the
    stream carries until it closes."""

    def __init__(self, stream: _Stream, v2: bool) -> None:
        self.stream, self.v2 = stream, v2
        self.ended = False

    def read(self) -> bytes:
        """The next block; b"" at the end. A cut raises _Cut (the command dies with it)."""
        while not self.ended:
            if not self.v2:
                data = self.stream.read_some()
                self.ended = not data
                return data
            kind, length = struct.unpack("<BI", self.stream.read(5))
            data = self.stream.read(length) if length else b""
            if kind == SHELL_CLOSE_STDIN:
                self.ended = True
            elif kind == SHELL_STDIN and data:
                return data
        return b""


class Shell:
    """Just enough of the phone's shell (mksh running toybox commands) for what DraftDeck
    (and a person poking around) runs."""

    def __init__(self, phone: FakePhone, stdin: _ShellInput | None = None) -> None:
        self.phone = phone
        self.stdin = stdin
        self._sink: BinaryIO | None = None  # the file a `>` or `>>` sends stdout to

    def run(self, line: str) -> tuple[bytes, bytes, int, bytes]:
        """stdout, stderr, exit status, and both streams as a terminal shows them."""
        out, err, code, mixed = b"", b"", 0, b""
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&>")
        lexer.whitespace_split = True
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token in (";", "&&"):
                if words:
                    words = [w.replace("$?", str(code)) for w in words]
                    o, e, code = self._command(words)
                    out, err, mixed = out + o, err + e, mixed + o + e
                    words = []
                    if token == "&&" and code != 0:
                        break
            else:
                words.append(token)
        return out, err, code, mixed

    def _command(self, words: list[str]) -> tuple[bytes, bytes, int]:
        words, redirect = self._redirection(words)
        if redirect is None:
            return self._dispatch(words)
        mode, target = redirect
        try:  # the shell opens (and with `>` truncates) the file before the command runs
            sink = self.phone.local(target).open("ab" if mode == ">>" else "wb", buffering=0)
        except OSError as exc:
            return b"", f"/system/bin/sh: can't create {target}: {exc.strerror}\n".encode(), 1
        with sink:
            self._sink = sink
            try:
                out, err, code = self._dispatch(words)
                if out and code == 0:
                    self._emit(out)
            except _NoSpace:
                err, code = b"%s: xwrite: No space left on device\n" % words[0].encode(), 1
            finally:
                self._sink = None
        return b"", err, code

    @staticmethod
    def _redirection(words: list[str]) -> tuple[list[str], tuple[str, str] | None]:
        """The words without a trailing `> FILE` / `>> FILE`, and that redirection."""
        if len(words) >= 3 and words[-2] in (">", ">>"):
            return words[:-2], (words[-2], words[-1])
        return words, None

    def _dispatch(self, words: list[str]) -> tuple[bytes, bytes, int]:
        name, args = words[0], words[1:]
        flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
        paths = [a for a in args if not a.startswith("-")]
        handler = getattr(self, f"_cmd_{name}", None)
        time.sleep(self.phone.command_delay.get(name, 0.0))
        if handler is None or name in self.phone.missing_commands:
            return b"", f"/system/bin/sh: {name}: inaccessible or not found\n".encode(), 127
        try:
            out, err, code = handler(flags, paths)
        except OSError as exc:
            return b"", f"{name}: {exc.strerror}\n".encode(), 1
        return out, err, code

    def _emit(self, data: bytes) -> None:
        """Write to the redirected file at once, within the phone's free space."""
        assert self._sink is not None
        budget = self.phone.free_bytes
        fits = data if budget is None else data[: max(budget, 0)]
        self._sink.write(fits)
        if budget is not None:
            self.phone.free_bytes = budget - len(fits)
        if len(fits) < len(data):
            raise _NoSpace

    def _missing(self, name: str, path: str) -> bytes:
        return f"{name}: {path}: No such file or directory\n".encode()

    def _cmd_getprop(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        props = self.phone.props
        if paths:
            return (props.get(paths[0], "") + "\n").encode(), b"", 0
        return "".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())).encode(), b"", 0

    def _cmd_echo(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        return (" ".join(paths) + "\n").encode(), b"", 0

    def _cmd_cat(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        if not paths and self.stdin is not None:
            if self._sink is None:
                return b"".join(iter(self.stdin.read, b"")), b"", 0
            # Block by block as it comes, as toybox's cat does: a cut keeps what arrived.
            while block := self.stdin.read():
                self._emit(block)
            return b"", b"", 0
        out, err = b"", b""
        for path in paths:
            local = self.phone.local(path)
            if local.is_file():
                out += local.read_bytes()
            else:
                err += self._missing("cat", path)
        return out, err, 1 if err else 0

    def _cmd_df(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        path = paths[0] if paths else "/data"
        if not self.phone.local(path).exists():
            return b"", self._missing("df", path), 1
        total = shutil.disk_usage(self.phone.root).total
        free = self.phone._free()
        line = (
            "Filesystem      1K-blocks    Used Available Use% Mounted on\n"
            f"/dev/block/dm-48 {total // 1024} {(total - free) // 1024} {free // 1024}"
            f" {100 * (total - free) // max(total, 1)}% /data\n"
        )
        return line.encode(), b"", 0

    def _cmd_ls(self, flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        out, err = b"", b""
        for path in paths or ["/"]:
            local = self.phone.local(path)
            if not local.exists():
                err += self._missing("ls", path)
                continue
            if local.is_dir() and "d" not in flags:
                names = sorted(os.listdir(local))
                if "a" not in flags:
                    names = [n for n in names if not n.startswith(".")]
                else:
                    names = [".", "..", *names]  # toybox lists them with -a
                entries = [(n, local / n) for n in names]
                if "l" in flags:
                    out += f"total {len(entries)}\n".encode()
            else:
                entries = [(path, local)]
            for name, entry in entries:
                out += (self._long(name, entry) if "l" in flags else name + "\n").encode()
        return out, err, 1 if err else 0

    @staticmethod
    def _long(name: str, path: Path) -> str:
        info = path.lstat()
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.st_mtime))
        size = 4096 if stat.S_ISDIR(info.st_mode) else info.st_size
        if stat.S_ISLNK(info.st_mode):
            name += f" -> {os.readlink(path)}"
        return f"{stat.filemode(info.st_mode)} 1 shell shell {size} {when} {name}\n"

    def _cmd_mkdir(self, flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        for path in paths:
            self.phone.local(path).mkdir(parents="p" in flags, exist_ok="p" in flags)
        return b"", b"", 0

    def _cmd_mv(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        source, dest = self.phone.local(paths[0]), self.phone.local(paths[1])
        if not source.exists():
            return b"", self._missing("mv", paths[0]), 1
        if dest.is_dir():
            dest = dest / source.name
        os.replace(source, dest)
        return b"", b"", 0

    def _cmd_rm(self, flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        err = b""
        for path in paths:
            local = self.phone.local(path)
            if local.is_dir() and not local.is_symlink():
                if "r" not in flags:
                    err += f"rm: {path}: Is a directory\n".encode()
                    continue
                shutil.rmtree(local)
            elif local.exists():
                local.unlink()
            elif "f" not in flags:
                err += self._missing("rm", path)
        return b"", err, 1 if err else 0

    def _cmd_sha256sum(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        out, err = b"", b""
        for path in paths:
            local = self.phone.local(path)
            if not local.is_file():
                err += self._missing("sha256sum", path)
                continue
            digest = hashlib.sha256()
            with local.open("rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
            out += f"{digest.hexdigest()}  {path}\n".encode()
        return out, err, 1 if err else 0


def main() -> None:
    """Run a phone in its own process (benchmarks: no GIL shared with the code under
    test): prints its address, serves until stdin closes."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--throttle-mbps", type=float, default=0.0)
    args = parser.parse_args()
    with FakePhone(args.root) as phone:
        phone.throttle_bytes_per_s = args.throttle_mbps * 1e6 or None
        print(phone.address, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
