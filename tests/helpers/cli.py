"""Run the `draftdeck` command the way a user does: a separate process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

APP = [sys.executable, "-m", "app"]


def run_cli(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None, check: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*APP, *args], capture_output=True, text=True, timeout=timeout, env=env, check=check
    )


def pair_args(target: Path, draft: Path, recipe: Path, d: int = 3) -> list[str]:
    """--target, --draft, one recipe file for both models and -d: the arguments the
    engine commands (generate, bench) share."""
    return [
        *("--target", str(target), "--draft", str(draft)),
        *("--recipe", str(recipe), "--draft-recipe", str(recipe), "-d", str(d)),
    ]
