"""The fake phone itself: a listener on loopback, its sandbox storage, its switches,
and the services it offers."""

from __future__ import annotations

import os
import posixpath
import shutil
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from tests.fake_phone.shell import serve_shell
from tests.fake_phone.sync import serve_sync
from tests.fake_phone.wire import Connection, Stream


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
        self.services: list[tuple[Stream, threading.Thread]] = []
        (root / "proc").mkdir(parents=True, exist_ok=True)
        (root / "proc" / "meminfo").write_text(f"MemTotal:       {ram_kb} kB\n")
        (root / "data" / "local" / "tmp").mkdir(parents=True, exist_ok=True)
        (root / "sdcard" / "Download").mkdir(parents=True, exist_ok=True)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._connections: list[Connection] = []
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
            conn = Connection(self, sock)
            self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Connection) -> None:
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

    def free_space(self) -> int:
        if self.free_bytes is not None:
            return self.free_bytes
        return shutil.disk_usage(self.root).free

    # -- services ------------------------------------------------------------------------

    def service_handler(self, service: str) -> Callable[[Stream], None] | None:
        if service.startswith("shell"):
            head, _, command = service.partition(":")
            v2 = "v2" in head.split(",")
            if v2 and not self.shell_v2:
                return None  # Android before 7: the service does not exist
            return lambda stream: serve_shell(self, stream, command, v2)
        if service == "sync:":
            return lambda stream: serve_sync(self, stream)
        return None
