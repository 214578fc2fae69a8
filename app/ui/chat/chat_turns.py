"""The Chat page's word on a target whose prompt templates mark no turns: its replies
will not stop by themselves; a button gives it the chat format its tokenizer implies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from app.core.infra.errors import FileError
from app.core.pack.turn_markers import MissingTurnMarkers
from app.core.recipe.chat_setting import apply_implied_format
from app.ui.base.dialogs import show_error
from app.ui.base.labels import wrap_to_width
from app.ui.base.pair_state import PairState

FACTS_KEY = "chat_missing_turn_markers"  # in BundleInfo.to_json()


class TurnMarkersNote(QWidget):
    """Hidden unless the loaded target's format has no turn markers."""

    def __init__(self, reload: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._reload = reload  # after the fix: the engine reads config.json at load
        self._target: Path | None = None
        self._bare: MissingTurnMarkers | None = None
        self.label = QLabel()
        self.label.setObjectName("warning")  # the style sheet colours it in either scheme
        wrap_to_width(self.label)
        self.apply_button = QPushButton()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.apply_button)
        self.apply_button.clicked.connect(self._on_apply_clicked)
        self.hide()

    def show_for(self, state: PairState) -> None:
        facts = state.loaded.target.get(FACTS_KEY) if state.loaded is not None else None
        if state.target is None or not isinstance(facts, dict):
            self._bare = None
            self.hide()
            return
        self._target, self._bare = state.target, MissingTurnMarkers.from_json(facts)
        self.label.setText(self._bare.message)
        implied = self._bare.implied
        self.apply_button.setText(f"Use {implied}" if implied else "")
        self.apply_button.setToolTip(
            f"Sets jinja in {state.target.name}/config.json to {implied} and reloads the pair"
        )
        self.apply_button.setVisible(implied is not None)
        self.show()

    def _on_apply_clicked(self) -> None:
        if self._target is None or self._bare is None:
            return
        try:
            apply_implied_format(self._target, self._bare)
        except FileError as exc:
            show_error(self, "Chat format not saved", f"{exc.path}: {exc.problem}")
            return
        self.hide()
        self._reload()
