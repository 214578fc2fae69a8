"""The adb server's socket protocol, spoken directly.

adbutils' connection sleeps 10 ms on every close and asks the server's version before
every device request; a push makes dozens of small requests, so those costs dominated
it. A request is a 4-hex-digit length and a service name; the server answers OKAY,
or FAIL with a length-prefixed message. See adb's SERVICES.TXT.
"""

from __future__ import annotations

import contextlib
import re
import socket
from dataclasses import dataclass, field

_TAG = re.compile(r"^(usb|product|model|device|transport_id):(.*)$")


class AdbRefused(Exception):
    """The adb server answered FAIL (no such device, unauthorized, closed, ...)."""


class AdbSocket:
    def __init__(self, port: int, timeout: float | None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        # Requests are small writes followed by a read: with Nagle's algorithm each
        # one waits out the server's delayed ACK (40 ms on Linux).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def __enter__(self) -> AdbSocket:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def shutdown(self) -> None:
        """Wake a thread blocked on this socket (it then sees the connection closed)."""
        with contextlib.suppress(OSError):  # already closed
            self.sock.shutdown(socket.SHUT_RDWR)

    def request(self, service: str) -> None:
        data = service.encode("utf-8")
        self.sock.sendall(b"%04x" % len(data) + data)
        status = self.read_exact(4)
        if status == b"FAIL":
            raise AdbRefused(self.read_block().decode("utf-8", "replace"))
        if status != b"OKAY":
            raise ConnectionError(f"adb server answered {status!r} to {service}")

    def read_exact(self, count: int) -> bytes:
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionResetError("the adb connection closed")
            data += chunk
        return bytes(data)

    def read_block(self) -> bytes:
        return self.read_exact(int(self.read_exact(4), 16))


def open_service(port: int, serial: str, service: str, timeout: float | None) -> AdbSocket:
    """A socket connected to `service` on the phone `serial`."""
    conn = AdbSocket(port, timeout)
    try:
        conn.request(f"host:transport:{serial}")
        conn.request(service)
    except BaseException:
        conn.close()
        raise
    return conn


@dataclass(frozen=True)
class RawDevice:
    serial: str
    state: str
    tags: dict[str, str] = field(default_factory=dict)


def parse_devices(text: str) -> list[RawDevice]:
    """Lines of `host:devices-l`: serial, a state (which may be several words, as in
    "no permissions (...)"), then key:value tags."""
    found = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2:
            continue
        state_words: list[str] = []
        tags: dict[str, str] = {}
        for word in words[1:]:
            match = _TAG.match(word)
            if match:
                tags[match.group(1)] = match.group(2)
            elif not tags:
                state_words.append(word)
        state = " ".join(state_words)
        if state.startswith("no permissions"):
            state = "no permissions"
        found.append(RawDevice(words[0], state, tags))
    return found


def device_features(port: int, serial: str, timeout: float = 10.0) -> frozenset[str]:
    """What the phone's adbd supports (shell_v2, fixed_push_mkdir, ...)."""
    with AdbSocket(port, timeout) as conn:
        conn.request(f"host-serial:{serial}:features")
        text = conn.read_block().decode("utf-8", "replace")
    return frozenset(f.strip() for f in text.split(",") if f.strip())


def list_devices(port: int, timeout: float = 10.0) -> list[RawDevice]:
    with AdbSocket(port, timeout) as conn:
        conn.request("host:devices-l")
        return parse_devices(conn.read_block().decode("utf-8", "replace"))
