"""DraftDeck's version as the numbers Windows and macOS want in their metadata.

A Windows version resource holds four 16-bit numbers; macOS wants one to three
period-separated integers in CFBundleVersion and CFBundleShortVersionString. A PEP 440
version may say more ("0.2.0rc1", "1.0.dev3", "1.1.post2", "1!2.0+local"): its release
numbers are kept, the rest is dropped ("0.2.0rc1" -> 0.2.0), so a pre-release never
breaks the build.
"""

from __future__ import annotations

import re

RELEASE = re.compile(r"\s*[vV]?(?:\d+!)?(\d+(?:\.\d+)*)")
WINDOWS_MAX = 0xFFFF  # each field of VS_FIXEDFILEINFO is 16 bits


def numeric_version(version: str, parts: int) -> tuple[int, ...]:
    """The release numbers of `version`, cut or padded with zeros to `parts` numbers."""
    found = RELEASE.match(version)
    numbers = [int(n) for n in found.group(1).split(".")] if found else []
    return tuple((numbers + [0] * parts)[:parts])


def windows_version(version: str) -> tuple[int, int, int, int]:
    """The four numbers of a Windows version resource (each at most 65535)."""
    a, b, c, d = (min(n, WINDOWS_MAX) for n in numeric_version(version, 4))
    return a, b, c, d


def macos_version(version: str) -> str:
    """CFBundleVersion / CFBundleShortVersionString: "MAJOR.MINOR.PATCH"."""
    return ".".join(str(n) for n in numeric_version(version, 3))
