"""`make screenshots SHOTS="--shots publish"`: only the named busy state is made (the
Publish dialog drawn over the window), and an unknown name is refused with the known ones.
Run as the Makefile runs it, in a subprocess with its own home and output folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from tests.helpers.paths import ROOT

SCRIPT = ROOT / "scripts" / "screenshots.py"


def _shots(out: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DRAFTDECK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "1024x700", "--out", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_only_the_publish_shot_is_made(tmp_path: Path, draftdeck_home: Path) -> None:
    out = tmp_path / "shots"
    done = _shots(out, draftdeck_home, "--shots", "publish", "--no-readme")
    assert done.returncode == 0, done.stderr
    # Each shot in the light and the dark scheme (gallery.camera.shot_name).
    names = ["publish-dark.png", "publish.png"]
    assert sorted(p.name for p in (out / "1024x700").iterdir()) == names
    for name in names:
        image = QImage(str(out / "1024x700" / name))
        assert (image.width(), image.height()) == (1024, 700)
    assert "shoot_publish" in done.stdout and "shoot_chat" not in done.stdout


def test_an_unknown_shot_is_refused(tmp_path: Path, draftdeck_home: Path) -> None:
    done = _shots(tmp_path / "shots", draftdeck_home, "--shots", "publish,nonsense")
    assert done.returncode == 2
    assert "unknown --shots nonsense" in done.stdout and "make_pack" in done.stdout
    assert not (tmp_path / "shots").exists()
