"""Where DraftDeck keeps its files.

Per-user folders come from platformdirs. `DRAFTDECK_HOME` puts them all under one
folder instead: tests use it for isolation, portable installs for a self-contained setup.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "DraftDeck"


def install_root() -> Path:
    """Where the files shipped beside the code are: a frozen build's unpacked folder
    (PyInstaller's _MEIPASS), else the checkout the code runs from."""
    frozen = getattr(sys, "_MEIPASS", None)
    return Path(frozen) if frozen else Path(__file__).resolve().parents[3]


def is_frozen() -> bool:
    return getattr(sys, "_MEIPASS", None) is not None


@dataclass(frozen=True)
class AppDirs:
    config: Path
    data: Path
    log: Path
    cache: Path

    @property
    def settings_file(self) -> Path:
        return self.config / "settings.json"

    @property
    def default_library(self) -> Path:
        return self.data / "packs"

    @property
    def log_file(self) -> Path:
        return self.log / "draftdeck.log"


def app_dirs() -> AppDirs:
    home = os.environ.get("DRAFTDECK_HOME")
    if home:
        root = Path(home)
        return AppDirs(root / "config", root / "data", root / "log", root / "cache")
    return AppDirs(
        config=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        data=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        log=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        cache=Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
    )
