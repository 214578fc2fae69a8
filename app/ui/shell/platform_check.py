"""Before the window opens on Linux: can Qt's xcb platform plugin load?

Without one of its libraries Qt aborts while creating the application, and the user
sees only "Aborted" (the cause goes to the log). This looks for the libraries first and
says which are missing and which packages bring them. No Qt is imported here.
"""

from __future__ import annotations

import ctypes.util
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Finder = Callable[[str], str | None]  # ctypes.util.find_library's shape


@dataclass(frozen=True)
class XcbLibrary:
    name: str  # as find_library takes it: "xcb-cursor" for libxcb-cursor.so.0
    debian: str  # the Debian/Ubuntu package
    fedora: str  # the Fedora/RHEL package


# What Qt 6's libqxcb.so and libQt6XcbQpa.so link to (ldd), with their packages.
XCB_LIBRARIES = (
    XcbLibrary("xcb-cursor", "libxcb-cursor0", "xcb-util-cursor"),
    XcbLibrary("xkbcommon-x11", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    XcbLibrary("xkbcommon", "libxkbcommon0", "libxkbcommon"),
    XcbLibrary("xcb-icccm", "libxcb-icccm4", "xcb-util-wm"),
    XcbLibrary("xcb-keysyms", "libxcb-keysyms1", "xcb-util-keysyms"),
    XcbLibrary("xcb-image", "libxcb-image0", "xcb-util-image"),
    XcbLibrary("xcb-render-util", "libxcb-render-util0", "xcb-util-renderutil"),
    XcbLibrary("xcb-util", "libxcb-util1", "xcb-util"),
    XcbLibrary("xcb-shape", "libxcb-shape0", "libxcb"),
    XcbLibrary("xcb-randr", "libxcb-randr0", "libxcb"),
    XcbLibrary("xcb-shm", "libxcb-shm0", "libxcb"),
    XcbLibrary("xcb-sync", "libxcb-sync1", "libxcb"),
    XcbLibrary("xcb-xfixes", "libxcb-xfixes0", "libxcb"),
    XcbLibrary("xcb-xkb", "libxcb-xkb1", "libxcb"),
    XcbLibrary("xcb-render", "libxcb-render0", "libxcb"),
    XcbLibrary("xcb", "libxcb1", "libxcb"),
    XcbLibrary("X11-xcb", "libx11-xcb1", "libX11-xcb"),
    XcbLibrary("X11", "libx11-6", "libX11"),
)


def uses_xcb(environ: Mapping[str, str], platform: str) -> bool:
    """Whether Qt will pick the xcb plugin: Linux, no QT_QPA_PLATFORM chosen (or xcb
    chosen), and not a Wayland session (Qt takes its Wayland plugin there)."""
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":", 1)[0] == "xcb"
    return not (environ.get("XDG_SESSION_TYPE") == "wayland" and environ.get("WAYLAND_DISPLAY"))


def ldconfig_finder() -> Finder:
    """find_library's answer from one read of the loader's cache: find_library runs
    `ldconfig -p` once per name (about 90 ms for these 18 at every start). Falls back
    to find_library itself where ldconfig cannot be run."""
    tool = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if tool is None:
        return ctypes.util.find_library
    try:
        listing = subprocess.run(
            [tool, "-p"], capture_output=True, text=True, timeout=10, env={"LC_ALL": "C"}
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ctypes.util.find_library
    sonames = {line.split()[0] for line in listing.splitlines()[1:] if line.strip()}

    def find(name: str) -> str | None:
        stem = f"lib{name}.so"
        return next((s for s in sorted(sonames) if s == stem or s.startswith(stem + ".")), None)

    return find


def missing_libraries(find: Finder = ctypes.util.find_library) -> list[XcbLibrary]:
    return [lib for lib in XCB_LIBRARIES if find(lib.name) is None]


def xcb_problem(
    environ: Mapping[str, str], platform: str, find: Finder | None = None
) -> str | None:
    """What to tell the user when the window cannot open for want of xcb libraries;
    None when it can (or when Qt will not use xcb). The cache is read only then."""
    if not uses_xcb(environ, platform):
        return None
    missing = missing_libraries(find or ldconfig_finder())
    if not missing:
        return None
    names = ", ".join(f"lib{lib.name}" for lib in missing)
    debian = " ".join(dict.fromkeys(lib.debian for lib in missing))
    fedora = " ".join(dict.fromkeys(lib.fedora for lib in missing))
    return (
        "DraftDeck cannot open its window: Qt's X11 (xcb) platform plugin needs "
        f"libraries this system lacks: {names}.\n"
        "Install them, then start DraftDeck again:\n"
        f"  Debian/Ubuntu:  sudo apt install {debian}\n"
        f"  Fedora/RHEL:    sudo dnf install {fedora}\n"
        "The commands (draftdeck --help) work without the window."
    )
