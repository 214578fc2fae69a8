"""The Chat page's Adaptive drafting switch: it starts as the draft pack says
(.draftdeck-drafting.json) and goes with each reply, so switching never reloads the pair.
A click is kept in that file (DraftDeck's own, beside the recipes MNN reads), so the
draft drafts that way from then on, in Chat and on the command line."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QCheckBox

from app.core.infra.errors import FileError
from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    FIXED_DRAFTING,
    DraftingSettings,
    read_drafting,
    write_drafting,
)

ADAPTIVE_TIP = (
    "On: each round drafts as many tokens as pay, up to the draft length, from the speed "
    "measured as the chat runs; where drafting does not pay, the reply goes on plain and "
    "tries drafting again now and then (the reply's figures say so, with the speedup). "
    "Off: every round drafts the full draft length, as MNN does. The choice "
    "is kept for this draft pack (its .draftdeck-drafting.json)."
)


class DraftingSwitch:
    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self.box = QCheckBox("Adaptive drafting")
        self.box.setChecked(DraftingSettings().adaptive)
        self.box.setToolTip(ADAPTIVE_TIP)
        self.settings = DraftingSettings()  # the draft pack's own
        self._draft: Path | None = None
        self.box.clicked.connect(self._on_clicked)

    def read(self, draft: Path) -> None:
        """The draft pack's settings; a file that cannot be read is said, and the
        defaults are used."""
        try:
            self.settings = read_drafting(draft)
        except FileError as exc:
            self.settings = FIXED_DRAFTING
            self._say(f"{exc}: drafting the full length every round.")
        self._draft = draft
        self.box.setChecked(self.settings.adaptive)

    def _on_clicked(self, checked: bool) -> None:
        if self._draft is None:
            return
        chosen = dataclasses.replace(self.settings, adaptive=checked)
        try:
            write_drafting(self._draft, chosen)
        except OSError as exc:
            self._say(f"could not keep the choice in {self._draft / DRAFTING_FILE}: {exc}")
            return
        self.settings = chosen

    def asked(self) -> DraftingSettings:
        """What the next reply drafts with: the switch over the pack's settings."""
        return dataclasses.replace(self.settings, adaptive=self.box.isChecked())
