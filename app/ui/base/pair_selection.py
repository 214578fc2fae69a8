"""The selected target and draft: one shared object, persisted in the settings.

The Pair page sets it; pages that start runs (Chat, Tune) and the Recipes page read it
and follow `changed`. Before it changes, `confirm` (set by the main window) may ask
first: unsaved recipe edits are saved or discarded at the moment another pair is chosen,
or the change is refused and `kept` tells whoever showed the new pair to show the old.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.infra.settings import Settings

Pair = tuple[Path | None, Path | None]  # target, draft
# Asked with the pair about to be chosen, what commits it and what refuses it.
Confirm = Callable[[Pair, Callable[[], None], Callable[[], None]], None]


class PairSelection(QObject):
    changed = Signal()
    kept = Signal()  # a change was refused: the pair is still the one it was

    def __init__(self, settings: Settings, save: Callable[[Settings], None]) -> None:
        super().__init__()
        self._settings = settings
        self._save = save
        self.confirm: Confirm | None = None

    @property
    def target(self) -> Path | None:
        return Path(self._settings.pair_target) if self._settings.pair_target else None

    @property
    def draft(self) -> Path | None:
        return Path(self._settings.pair_draft) if self._settings.pair_draft else None

    def holds(self, target: Path | None, draft: Path | None) -> bool:
        return (self.target, self.draft) == (target, draft)

    def select(
        self,
        target: Path | None,
        draft: Path | None,
        then: Callable[[], None] | None = None,
    ) -> None:
        """Choose this pair, after `confirm` agrees (it may ask first, so the change can
        come later or never); `then` runs once the pair is this one."""
        new = (str(target) if target else "", str(draft) if draft else "")
        if new == (self._settings.pair_target, self._settings.pair_draft):
            if then is not None:
                then()
            return

        def commit() -> None:
            self._settings.pair_target, self._settings.pair_draft = new
            self._save(self._settings)
            self.changed.emit()
            if then is not None:
                then()

        if self.confirm is None:
            commit()
        else:
            self.confirm((target, draft), commit, self.kept.emit)
