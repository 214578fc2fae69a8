"""`make screenshots` works: a small part of the gallery (the empty states at one size),
run as the Makefile runs it, in a subprocess with its own home and output folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from tests.helpers.paths import ROOT

SCRIPT = ROOT / "scripts" / "screenshots.py"
PAGES = ("library", "downloads", "pair", "recipes", "chat", "tune", "phone")


def _colours(image: QImage) -> int:
    small = image.scaled(32, 32)
    return len({small.pixel(x, y) for x in range(32) for y in range(32)})


def test_the_empty_gallery_at_one_size(tmp_path: Path, draftdeck_home: Path) -> None:
    out = tmp_path / "shots"
    docs_before = {p: p.stat().st_mtime_ns for p in (ROOT / "docs").glob("*.png")}
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DRAFTDECK_HOME": str(draftdeck_home)}
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            *("--sizes", "1024x700", "--states", "empty"),
            *("--out", str(out), "--no-readme"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    shots = sorted(p.name for p in (out / "1024x700").iterdir())
    # Each page in the light and the dark scheme.
    assert shots == sorted(f"{page}-empty{dark}.png" for page in PAGES for dark in ("", "-dark"))
    for name in shots:
        image = QImage(str(out / "1024x700" / name))
        assert (image.width(), image.height()) == (1024, 700), name
        # A blank grab is one colour; a quiet page (a notice, no data) still has a few.
        assert _colours(image) > 3, f"{name} looks blank"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert all(f'src="1024x700/{name}"' in index for name in shots)
    # Nothing written into the repository: docs/ as it was, no build/ output used.
    assert {p: p.stat().st_mtime_ns for p in (ROOT / "docs").glob("*.png")} == docs_before
