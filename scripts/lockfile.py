"""Reading the lock files in locks/ (scripts/lock.py writes them) and the platforms they
are for. Shared by scripts/lock.py and scripts/check_wheels.py.

A lock is a pip requirements file in which every requirement is `name==version`,
optionally with an environment marker (`pefile==2024.8.26 ; sys_platform == 'win32'`);
`#` starts a comment and indented lines are uv's annotations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
APP_LOCK = ROOT / "locks" / "app.txt"
EXPORT_LOCK = ROOT / "locks" / "export-env.txt"
# The copy the app reads at run time (resources/ is package data; the frozen app has it).
EXPORT_LOCK_RESOURCE = ROOT / "resources" / "export-env-lock.txt"


class LockError(ValueError):
    """A lock file that is not a list of exact pins (the message names file and line)."""


@dataclass(frozen=True)
class Platform:
    """One operating system and machine the app is built for."""

    key: str  # "windows", "macos", "linux"
    label: str
    markers: dict[str, str]  # marker variables other than the Python version

    def environment(self, python: str) -> dict[str, str]:
        """Marker variables of CPython `python` ("3.11") on this platform."""
        return {
            **self.markers,
            "python_version": python,
            "python_full_version": f"{python}.0",
            "implementation_name": "cpython",
            "platform_python_implementation": "CPython",
            "extra": "",
        }


WINDOWS = Platform(
    "windows",
    "Windows amd64",
    {
        "sys_platform": "win32",
        "platform_system": "Windows",
        "platform_machine": "AMD64",
        "os_name": "nt",
    },
)
MACOS = Platform(
    "macos",
    "macOS arm64",
    {
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "platform_machine": "arm64",
        "os_name": "posix",
    },
)
LINUX = Platform(
    "linux",
    "Linux x86_64",
    {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
    },
)
PLATFORMS = (WINDOWS, MACOS, LINUX)
APP_PYTHON = "3.11"  # the Python the app's builds use
EXPORT_PYTHONS = ("3.10", "3.11")  # the export environment is made with the app's Python


@dataclass(frozen=True)
class Pin:
    """One line of a lock."""

    name: str  # canonical (PEP 503) name
    version: str
    marker: Marker | None
    line: int

    def applies(self, platform: Platform, python: str) -> bool:
        return self.marker is None or self.marker.evaluate(platform.environment(python))

    def requirement(self) -> str:
        """The pin as pip takes it on the command line (without its marker)."""
        return f"{self.name}=={self.version}"


def read_lock(path: Path) -> list[Pin]:
    """The pins of the lock at `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LockError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    return parse_lock(text, str(path))


def parse_lock(text: str, source: str) -> list[Pin]:
    pins = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise LockError(f"{source}:{number}: not a requirement: {line!r} ({exc})") from exc
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
            raise LockError(f"{source}:{number}: {req.name} is not pinned to one version: {line!r}")
        if req.extras or req.url:
            raise LockError(f"{source}:{number}: a lock pins names only: {line!r}")
        pins.append(Pin(canonicalize_name(req.name), specs[0].version, req.marker, number))
    return pins


def pins_for(pins: list[Pin], platform: Platform, python: str) -> list[Pin]:
    """The pins that apply on `platform` under `python`."""
    return [pin for pin in pins if pin.applies(platform, python)]
