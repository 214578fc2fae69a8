"""Run a small script in two processes at once, to test a store that two windows and the
command line share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_two_writers(script: str, args: list[str], home: Path) -> None:
    """Both processes start before either is waited for; both must succeed."""
    env = {**os.environ, "DRAFTDECK_HOME": str(home)}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, *args], env=env, cwd=ROOT) for _ in range(2)
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0], codes
