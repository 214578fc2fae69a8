"""The adb server and one phone behind it, with every adb failure turned into a
PhoneError that says what to do.

We start the adb server ourselves (ADBUTILS_ADB_PATH, else adb on PATH, else the one
bundled with adbutils) on the port ANDROID_ADB_SERVER_PORT names, so the GUI, the CLI
and a user's own `adb` share one server, and talk to it over its socket protocol.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from app.core.infra.errors import PhoneError
from app.core.infra.processes import no_window_flags
from app.core.phone.adb_wire import (
    AdbRefused,
    AdbSocket,
    RawDevice,
    device_features,
    list_devices,
    open_service,
)

DEFAULT_PORT = 5037
HOMEBREW_PREFIXES = ("/opt/homebrew", "/usr/local")
READY = "device"

GUIDANCE = {
    "unauthorized": (
        "Unlock the phone and accept “Allow USB debugging?” (tick “Always allow from this "
        "computer”). No prompt? Revoke USB debugging authorizations in Developer options "
        "and replug."
    ),
    "offline": (
        "The phone is attached but not answering. Unplug and replug the cable; if it stays "
        "offline, turn USB debugging off and on again."
    ),
    "no permissions": (
        "This computer may not open the USB device. On Linux, install udev rules for "
        "Android (e.g. the android-sdk-platform-tools-common package) and replug."
    ),
    "authorizing": "Waiting for the phone to finish authorizing; this takes a moment.",
    "connecting": "Connecting; this takes a moment.",
    "recovery": "The phone is in recovery mode: reboot it into Android.",
    "sideload": "The phone is in sideload mode: reboot it into Android.",
    "bootloader": "The phone is in the bootloader: reboot it into Android.",
}
NO_DEVICES = (
    "No phone found. On the phone enable Developer options → USB debugging, then connect "
    "it with a data cable (some cables only charge)."
)
SHELL_TIMEOUT = 600.0  # hashing a multi-GB weight file on a slow phone takes minutes
START_TIMEOUT = 20.0


def server_port() -> int:
    value = os.environ.get("ANDROID_ADB_SERVER_PORT", "")
    return int(value) if value.isdigit() else DEFAULT_PORT


def _sdk_platform_tools(name: str) -> list[str]:
    """adb in an Android SDK: ANDROID_HOME / ANDROID_SDK_ROOT, Android Studio's default
    SDK folders, Homebrew. An app started from the Finder or a desktop menu does not
    get the shell's PATH, so these are looked at explicitly."""
    roots = [os.environ.get("ANDROID_HOME", ""), os.environ.get("ANDROID_SDK_ROOT", "")]
    home = os.path.expanduser("~")
    roots += [
        os.path.join(home, "Library", "Android", "sdk"),  # macOS
        os.path.join(home, "Android", "Sdk"),  # Linux
        os.path.join(os.environ.get("LOCALAPPDATA", home), "Android", "Sdk"),  # Windows
    ]
    found = [os.path.join(root, "platform-tools", name) for root in roots if root]
    return found + [os.path.join(prefix, "bin", name) for prefix in HOMEBREW_PREFIXES]


def _runnable(path: str) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _adb_name() -> str:
    return "adb.exe" if sys.platform == "win32" else "adb"


def bundled_adb() -> str | None:
    """The adb that ships with DraftDeck: in the adbutils wheel (Linux x86_64 and
    Windows), or where a packaged app keeps it. Found without importing adbutils,
    which pulls in Pillow for screenshots we never take (20 MB of a packaged app)."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        folders = [os.path.join(frozen_root, "adbutils")]
    else:
        spec = importlib.util.find_spec("adbutils")
        folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = os.path.join(folder, "binaries", _adb_name())
        if _runnable(path):
            return path
    return None


def adb_executable() -> str | None:
    """The adb program we would start: ADBUTILS_ADB_PATH, then PATH, then an Android
    SDK's, then the bundled one (a user's own adb matches the server they may run)."""
    name = _adb_name()
    candidates = [os.environ.get("ADBUTILS_ADB_PATH", ""), shutil.which("adb") or ""]
    candidates += _sdk_platform_tools(name)
    found = next((path for path in candidates if _runnable(path)), None)
    return found or bundled_adb()


def lost(phone_name: str, exc: BaseException) -> PhoneError:
    return PhoneError(
        f"Lost the connection to {phone_name} ({exc or type(exc).__name__}). Check the cable "
        "and that the phone is unlocked, then try again.",
        "disconnected",
    )


def server_running(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Adb:
    """The adb server on 127.0.0.1:port (started on first use). A server we started is
    ours to stop (`stop_own_server`); one that was already running is left alone."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or server_port()
        self._lock = threading.Lock()
        self._started_with: str | None = None  # the adb that started the server, if we did
        self._stopped = False
        # What the user calls each phone (its model), as the device listing learnt it:
        # messages name "Pixel 8", not the adb address 127.0.0.1:46645.
        self.names: dict[str, str] = {}

    def name_of(self, serial: str) -> str:
        return self.names.get(serial) or serial

    @property
    def started_server(self) -> bool:
        return self._started_with is not None

    def ensure_server(self) -> None:
        with self._lock:  # two listings at once must not both start a server
            self._start_unless_running()

    def _start_unless_running(self) -> None:
        if self._stopped:  # a late listing after quit must not start a server again
            raise PhoneError("DraftDeck is closing; adb was stopped.", "no_adb")
        if server_running(self.port):
            return
        exe = adb_executable()
        if exe is None:
            raise PhoneError(
                "adb was not found. Install Android platform-tools (or reinstall DraftDeck, "
                "which ships adb) and try again.",
                "no_adb",
            )
        try:
            subprocess.run(
                [exe, "-P", str(self.port), "start-server"],
                timeout=START_TIMEOUT,
                capture_output=True,
                check=False,
                creationflags=no_window_flags(),  # no console window on Windows
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PhoneError(f"Could not start adb ({exe}): {exc}", "no_adb") from exc
        if not server_running(self.port):
            raise PhoneError(
                f"adb did not start on port {self.port}; another program may hold the port "
                "(set ANDROID_ADB_SERVER_PORT to use another).",
                "no_adb",
            )
        self._started_with = exe

    def stop_own_server(self) -> None:
        """On quit: stop the adb server if we started it (never one the user or another
        program ran), and start none after this."""
        with self._lock:
            self._stopped = True
            exe, self._started_with = self._started_with, None
        if exe is None or not server_running(self.port):
            return
        # A failure is no reason to hold up quitting: the server stays, as it would have.
        with suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [exe, "-P", str(self.port), "kill-server"],
                timeout=START_TIMEOUT,
                capture_output=True,
                check=False,
                creationflags=no_window_flags(),
            )

    def devices(self) -> list[RawDevice]:
        self.ensure_server()
        try:
            return list_devices(self.port)
        except (AdbRefused, OSError) as exc:
            raise PhoneError(f"adb server on port {self.port} failed: {exc}", "no_adb") from exc

    def phone(self, serial: str) -> Phone:
        """A ready phone; one that is absent or not ready is refused with what to do."""
        state = next((d.state for d in self.devices() if d.serial == serial), None)
        if state is None:
            raise PhoneError(
                f"{self.name_of(serial)} is not connected: plug it in, unlock it and try again.",
                "no_device",
            )
        if state != READY:
            advice = GUIDANCE.get(state, "")
            code = "unauthorized" if state == "unauthorized" else "not_ready"
            raise PhoneError(f"{self.name_of(serial)} is {state}. {advice}".strip(), code)
        return self.attach(serial)

    def attach(self, serial: str) -> Phone:
        """A phone just listed as ready (no second listing to check it)."""
        try:
            features = device_features(self.port, serial)
        except (AdbRefused, OSError) as exc:
            raise lost(self.name_of(serial), exc) from exc
        return Phone(self.port, serial, features, self.name_of(serial))


@dataclass(frozen=True)
class ShellResult:
    code: int
    out: str
    err: str


_EXIT_MARK = "DRAFTDECK-EXIT:"


class Phone:
    """Shell commands and sync connections to one ready device.

    `abort()` (from any thread) closes every connection the phone has open, so a
    cancelled push does not wait for a long command, such as hashing a large file,
    to finish on the phone."""

    def __init__(self, port: int, serial: str, features: frozenset[str], name: str = "") -> None:
        self.port = port
        self.serial = serial
        self.name = name or serial  # for messages: the model when it is known
        # Android 7+ has the shell protocol (separate stderr, exit codes).
        self._shell_v2 = "shell_v2" in features
        self._lock = threading.Lock()
        self._open: set[AdbSocket] = set()
        self._aborted = False

    @property
    def has_shell_v2(self) -> bool:
        """Whether commands can take stdin and report their exit status (Android 7+)."""
        return self._shell_v2

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            conns = list(self._open)
        for conn in conns:
            conn.shutdown()

    @contextmanager
    def connect(self, service: str, timeout: float | None) -> Iterator[AdbSocket]:
        """A connection to a service on the phone, closed after use (or on abort)."""
        with self._lock:
            if self._aborted:
                raise ConnectionAbortedError("stopped")
        conn = open_service(self.port, self.serial, service, timeout)
        with self._lock:
            self._open.add(conn)
            aborted = self._aborted
        try:
            if aborted:
                raise ConnectionAbortedError("stopped")
            yield conn
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()

    def shell(self, command: str, timeout: float = SHELL_TIMEOUT) -> ShellResult:
        try:
            if self._shell_v2:
                return self._run_v2(command, timeout)
            return self._run_v1(command, timeout)
        except (AdbRefused, OSError) as exc:
            raise lost(self.name, exc) from exc

    def _run_v2(self, command: str, timeout: float) -> ShellResult:
        with self.connect(f"shell,v2,raw:{command}", timeout) as conn:
            return read_v2_result(conn)

    def _run_v1(self, command: str, timeout: float) -> ShellResult:
        wrapped = f"{command}; echo {_EXIT_MARK}$?"
        with self.connect(f"shell:{wrapped}", timeout) as conn:
            data = bytearray()
            while chunk := conn.sock.recv(65536):
                data += chunk
        # Old phones run v1 commands on a terminal: CRLF line ends, no separate stderr.
        out, mark, tail = _text(data).replace("\r\n", "\n").rpartition(_EXIT_MARK)
        status = tail.split("\n", 1)[0].strip()
        if not mark or not status.isdigit():  # cut off before the marker
            return ShellResult(255, out or tail, "")
        return ShellResult(int(status), out, "")

    def run(self, command: str, timeout: float = SHELL_TIMEOUT) -> str:
        """Run a command that must succeed; its output."""
        result = self.shell(command, timeout)
        if result.code != 0:
            detail = result.err.strip() or result.out.strip() or f"exit status {result.code}"
            raise PhoneError(f"On {self.name}, `{command}` failed: {detail}", "command_failed")
        return result.out


def read_v2_result(conn: AdbSocket) -> ShellResult:
    """A shell protocol v2 command's output and exit status, read to its end."""
    streams = {1: bytearray(), 2: bytearray()}  # stdout, stderr
    while True:
        kind = conn.read_exact(1)[0]
        data = conn.read_exact(int.from_bytes(conn.read_exact(4), "little"))
        if kind == 3:  # exit status
            code = data[0] if data else 255
            break
        if kind in streams:
            streams[kind] += data
    return ShellResult(code, _text(streams[1]), _text(streams[2]))


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")
