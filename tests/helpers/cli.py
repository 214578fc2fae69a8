"""Run the `draftdeck` command the way a user does: a separate process."""

from __future__ import annotations

import subprocess
import sys

APP = [sys.executable, "-m", "app"]


def run_cli(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None, check: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*APP, *args], capture_output=True, text=True, timeout=timeout, env=env, check=check
    )
