"""Saving settings from the window: a refusal is a status message, never a dialog.

The library, the pair selection and the window save through one `SettingsSaver`. When
the folder refuses (read-only, full, not a folder), the change stays in memory for the
session and the window says once that it is not saved; the same problem is not
repeated on every click.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from app.core.infra.errors import FileError
from app.core.infra.settings import Settings, save_settings

log = logging.getLogger("draftdeck.ui.settings")


class SettingsSaver(QObject):
    failed = Signal(str)  # what was not saved, and why
    saved = Signal()  # a save went through (after a failure: the problem is gone)

    def __init__(self) -> None:
        super().__init__()
        self._last_problem = ""

    def __call__(self, settings: Settings) -> None:
        try:
            save_settings(settings)
        except FileError as exc:
            problem = f"{exc}; your changes last until DraftDeck closes"
            log.warning("%s", problem)
            if problem != self._last_problem:
                self._last_problem = problem
                self.failed.emit(problem)
        else:
            if self._last_problem:
                self._last_problem = ""
                self.saved.emit()
