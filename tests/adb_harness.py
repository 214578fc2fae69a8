"""A real adb server (the adb binary DraftDeck uses) on an isolated port, for tests and
benchmarks, with fake phones (tests/fake_phone/) attached over loopback.

The server runs in the foreground (`nodaemon`) as our child, with its own key folder,
no mDNS, and is killed at teardown, so nothing leaks into a developer's own adb."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import adbutils

from tests.fake_phone import FakePhone

__all__ = ["AdbServer", "free_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class AdbServer:
    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.exe = adbutils.adb_path()
        self.env = {
            **os.environ,
            "ANDROID_USER_HOME": str(home),
            "ANDROID_ADB_SERVER_PORT": str(self.port),
            "ADB_MDNS": "0",
            "ADB_MDNS_AUTO_CONNECT": "0",
            "ADB_LIBUSB": "0",
        }
        self.log = home / "adb-server.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [self.exe, "-P", str(self.port), "nodaemon", "server"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.client = adbutils.AdbClient(host="127.0.0.1", port=self.port)
        deadline = time.monotonic() + 15
        while not self._listening():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"adb server did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def __enter__(self) -> AdbServer:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)

    def state(self, serial: str) -> str | None:
        for info in self.client.list():
            if info.serial == serial:
                return str(info.state)
        return None

    def connect(self, phone: FakePhone, state: str = "device", timeout: float = 15.0) -> str:
        """Attach a fake phone (like plugging it in) and wait until adb shows `state`."""
        self.client.connect(phone.address, timeout=timeout)
        self.wait_state(phone.address, state, timeout)
        return phone.address

    def disconnect(self, phone: FakePhone, timeout: float = 15.0) -> None:
        """Detach it (like pulling the cable out for good)."""
        self.client.disconnect(phone.address)
        self.wait_state(phone.address, None, timeout)

    def wait_state(self, serial: str, state: str | None, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while (now := self.state(serial)) != state:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{serial} stayed {now!r}, expected {state!r}")
            time.sleep(0.05)
