"""Where the window opens the first time (no saved geometry): a share of the screen's
free area, centred. Qt-free, so the rule is tested on any screen size.

A fixed size served no screen well: 1180x760 left a 1600x1000 screen two-thirds empty
and did not fit a 1366x768 laptop's free area under its panel.
"""

from __future__ import annotations

# The share of the free area's width and height the window takes.
SCREEN_SHARE = 0.85
# The smallest size every page is laid out for (tests/ui/shell/test_window_size.py).
MINIMUM = (1024, 700)

Rect = tuple[int, int, int, int]  # x, y, width, height


def first_geometry(available: Rect) -> Rect:
    """The window's first geometry on a screen whose free area (without panels and
    docks) is `available`: SCREEN_SHARE of it, at least MINIMUM where the free area
    holds that, never more than the free area, centred in it."""
    x, y, width, height = available
    wanted = (round(width * SCREEN_SHARE), round(height * SCREEN_SHARE))
    size = [
        min(max(want, least), room)
        for want, least, room in zip(wanted, MINIMUM, (width, height), strict=True)
    ]
    return (x + (width - size[0]) // 2, y + (height - size[1]) // 2, size[0], size[1])
