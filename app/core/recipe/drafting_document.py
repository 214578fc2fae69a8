"""A draft pack's drafting settings file as an editor opened it (drafting_settings.py says
what the settings are; side_document.py how a change made elsewhere since, by Chat's
switch, `--adaptive` or Tune, is seen before a save writes over it)."""

from __future__ import annotations

from pathlib import Path

from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.core.recipe.side_document import SideDocument


class DraftingDocument(SideDocument[DraftingSettings]):
    words = "drafting settings"

    @staticmethod
    def file_path(pack: Path) -> Path:
        return pack / DRAFTING_FILE

    @staticmethod
    def read(pack: Path) -> DraftingSettings:
        return read_drafting(pack)

    @staticmethod
    def write(pack: Path, settings: DraftingSettings) -> None:
        write_drafting(pack, settings)
