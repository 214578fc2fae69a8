"""The window's first size (no saved geometry): a share of the screen's free area, at
least 1024x700 where that fits, centred. The rule is Qt-free; one window checks that
the first run uses it."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from app.ui.shell.application import create_main_window
from app.ui.shell.first_size import first_geometry

# (free area of the screen) -> the window's first geometry
SCREENS = [
    # A 1366x768 laptop under a 32 px panel: 85 % of the width, the height raised to
    # the 700 every page is laid out for.
    ((0, 32, 1366, 736), (102, 50, 1161, 700)),
    # The 1600x1000 (a 1180x760 window left it two-thirds empty).
    ((0, 0, 1600, 1000), (120, 75, 1360, 850)),
    ((0, 0, 2560, 1440), (192, 108, 2176, 1224)),
    # Exactly the minimum: all of it.
    ((0, 0, 1024, 700), (0, 0, 1024, 700)),
    # Smaller than the minimum (a scaled laptop): never more than there is.
    ((0, 0, 960, 600), (0, 0, 960, 600)),
    # A second screen to the right of the first, with its panel on the left.
    ((1920 + 48, 0, 1872, 1080), (1920 + 48 + 140, 81, 1591, 918)),
]


@pytest.mark.parametrize(("free", "expected"), SCREENS, ids=[f"{s[2]}x{s[3]}" for s, _ in SCREENS])
def test_first_geometry(free: tuple[int, int, int, int], expected: tuple[int, ...]) -> None:
    x, y, width, height = geometry = first_geometry(free)
    assert geometry == expected
    fx, fy, fw, fh = free
    assert fx <= x and x + width <= fx + fw and fy <= y and y + height <= fy + fh  # on it
    assert abs((x - fx) - (fx + fw - x - width)) <= 1  # centred
    assert abs((y - fy) - (fy + fh - y - height)) <= 1


def test_the_first_run_opens_at_the_rule_s_size(qtbot: QtBot) -> None:
    """No saved geometry: the window takes first_geometry of its screen's free area (the
    offscreen screen's: 800x600, so all of it)."""
    window = create_main_window()
    qtbot.addWidget(window)
    free = window.screen().availableGeometry()
    x, y, width, height = first_geometry((free.x(), free.y(), free.width(), free.height()))
    assert (window.width(), window.height()) == (width, height) != (1180, 760)
    assert (window.x(), window.y()) == (x, y)
    window.close()
