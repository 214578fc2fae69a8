"""A pack's settings for this computer as an editor opened them (desktop_settings.py says
what they are; side_document.py how a change made elsewhere since, by Tune's Apply or
`draftdeck recipe move-to-computer`, is seen before a save writes over it). Saving no
settings at all removes the file."""

from __future__ import annotations

from pathlib import Path

from app.core.recipe.desktop_settings import (
    DesktopSettings,
    read_desktop,
    settings_path,
    write_desktop,
)
from app.core.recipe.side_document import SideDocument


class DesktopDocument(SideDocument[DesktopSettings]):
    words = "this computer's settings"

    @staticmethod
    def file_path(pack: Path) -> Path:
        return settings_path(pack)

    @staticmethod
    def read(pack: Path) -> DesktopSettings:
        return read_desktop(pack)

    @staticmethod
    def write(pack: Path, settings: DesktopSettings) -> None:
        write_desktop(pack, settings)
