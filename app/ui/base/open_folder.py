"""Show a folder in the system's file manager, or say where it is when none opens it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices


def open_folder(path: Path) -> str:
    """Open `path` in the file manager: "" when one took it, else a sentence for the
    status bar with the path, so the user can open it by hand (a machine without a
    file manager, or a desktop that refuses, must not stay silent)."""
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return ""
    return f"No file manager opened the folder; open it by hand: {path}"
