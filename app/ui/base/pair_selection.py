"""The selected target and draft: one shared object, persisted in the settings.

The Pair page sets it; pages that start runs (Chat, Tune) and the Recipes page read it
and follow `changed`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.infra.settings import Settings


class PairSelection(QObject):
    changed = Signal()

    def __init__(self, settings: Settings, save: Callable[[Settings], None]) -> None:
        super().__init__()
        self._settings = settings
        self._save = save

    @property
    def target(self) -> Path | None:
        return Path(self._settings.pair_target) if self._settings.pair_target else None

    @property
    def draft(self) -> Path | None:
        return Path(self._settings.pair_draft) if self._settings.pair_draft else None

    def select(self, target: Path | None, draft: Path | None) -> None:
        new = (str(target) if target else "", str(draft) if draft else "")
        if new == (self._settings.pair_target, self._settings.pair_draft):
            return
        self._settings.pair_target, self._settings.pair_draft = new
        self._save(self._settings)
        self.changed.emit()
