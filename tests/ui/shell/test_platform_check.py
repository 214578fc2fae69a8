"""The check before the window opens on Linux: missing xcb libraries are named, with the
packages to install, instead of Qt's bare "Aborted"."""

from __future__ import annotations

from collections.abc import Callable

from app.ui.shell.platform_check import XCB_LIBRARIES, missing_libraries, uses_xcb, xcb_problem

LINUX_X11 = {"DISPLAY": ":0"}


def finder_without(*absent: str) -> Callable[[str], str | None]:
    def find(name: str) -> str | None:
        return None if name in absent else f"lib{name}.so.0"

    return find


def test_all_libraries_present_means_no_problem() -> None:
    assert xcb_problem(LINUX_X11, "linux", finder_without()) is None
    assert missing_libraries(finder_without()) == []


def test_missing_libraries_are_named_with_their_packages() -> None:
    text = xcb_problem(LINUX_X11, "linux", finder_without("xcb-icccm", "xcb-keysyms"))
    assert text is not None
    assert "libraries this system lacks: libxcb-icccm, libxcb-keysyms." in text
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1\n" in text
    assert "sudo dnf install xcb-util-wm xcb-util-keysyms\n" in text


def test_packages_are_listed_once_in_the_order_met() -> None:
    text = xcb_problem(LINUX_X11, "linux", finder_without("xcb-shape", "xcb-randr", "xcb-cursor"))
    assert text is not None
    assert "sudo apt install libxcb-cursor0 libxcb-shape0 libxcb-randr0\n" in text
    assert "sudo dnf install xcb-util-cursor libxcb\n" in text  # shape and randr: one package


def test_no_check_where_qt_will_not_use_xcb() -> None:
    nothing = finder_without(*(lib.name for lib in XCB_LIBRARIES))
    assert xcb_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux", nothing) is None
    assert xcb_problem(LINUX_X11, "darwin", nothing) is None
    assert xcb_problem(LINUX_X11, "win32", nothing) is None
    wayland = {"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}
    assert xcb_problem(wayland, "linux", nothing) is None
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb:someoption"}, "linux")
    assert uses_xcb({"XDG_SESSION_TYPE": "x11"}, "linux")


def test_the_one_read_finder_agrees_with_find_library() -> None:
    import ctypes.util

    from app.ui.shell.platform_check import ldconfig_finder

    find = ldconfig_finder()
    names = [lib.name for lib in XCB_LIBRARIES] + ["c", "m", "no-such-library-here"]
    for name in names:
        assert (find(name) is None) == (ctypes.util.find_library(name) is None), name
