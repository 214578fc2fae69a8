"""A large enough screen for the offscreen Qt platform.

The offscreen plugin's default screen is 800x800 px (qoffscreenintegration.cpp,
`defaultConfiguration`). It does not clamp windows (checked: a 1600x1000 resize grabs
1600x1000 there too), but a window larger than its screen is not what a user has, and
anything placed by the screen's size (restored geometry, dialogs) would be off. So the
gallery gives the plugin a 1920x1200 screen through its JSON configuration:
`QT_QPA_PLATFORM=offscreen:configfile=<file>` with {"screens": [{"width": …}]}; every
PNG's pixel size is checked after it is written (camera.check_png).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SCREEN = (1920, 1200)


def use_large_screen(folder: Path) -> None:
    """Point the offscreen platform at a 1920x1200 screen (before QApplication exists).

    Another platform (a real display, xcb under Xvfb) is left as it is.
    """
    platform = os.environ.get("QT_QPA_PLATFORM", "offscreen")
    if platform.split(":")[0] != "offscreen":
        return
    config = folder / "offscreen.json"
    screen = {"name": "gallery", "x": 0, "y": 0, "width": SCREEN[0], "height": SCREEN[1]}
    config.write_text(json.dumps({"screens": [{**screen, "logicalDpi": 96, "dpr": 1.0}]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
