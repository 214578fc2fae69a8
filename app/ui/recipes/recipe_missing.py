"""What a recipe tab shows for a file the pack does not have: no empty editor that calls
nothing "valid JSON", but what is missing, what runs instead, and a way to start the file
from a preset (it is written when the user saves, like any edit)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.pack.files import CONFIG, DRAFT_RECIPE_ALT
from app.core.recipe.presets import Preset
from app.core.recipe.schema import DRAFT
from app.ui.base.labels import wrap_to_width
from app.ui.recipes.recipe_presets import fill_presets, preset_combo


def preset_values(preset: Preset, scope: str) -> dict[str, object]:
    """What a preset sets in a file of this side."""
    return dict(preset.draft if scope == DRAFT else preset.target)


class MissingRecipe(QWidget):
    """`chosen(preset)` when the user starts the file from a preset."""

    chosen = Signal(object)

    def __init__(self, scope: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope = scope
        self.title = QLabel()
        self.title.setObjectName("missingRecipeTitle")
        wrap_to_width(self.title)
        self.explanation = QLabel()
        self.explanation.setObjectName("pageHint")
        wrap_to_width(self.explanation)
        self.presets = preset_combo()
        self.create_button = QPushButton("Create from Preset")
        self.create_button.clicked.connect(self._on_create)
        row = QHBoxLayout()
        row.addWidget(QLabel("Preset:"))
        row.addWidget(self.presets, 1)
        row.addWidget(self.create_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.explanation)
        layout.addLayout(row)
        layout.addStretch(1)

    def show_file(self, path: Path) -> None:
        """Say that `path` is missing, and what runs without it."""
        pack = path.parent.name
        if self.scope == DRAFT:
            self.title.setText(
                f"No draft recipe: {pack} has no {path.name} (nor {DRAFT_RECIPE_ALT})."
            )
            runs = (
                f"Until there is one, the draft runs with the settings of its {CONFIG}. "
                f"Create {path.name} from a preset to tune the draft; it is written when "
                "you save (Ctrl+S), and Undo takes it back before that."
            )
        else:
            self.title.setText(f"No target settings: {pack} has no {path.name}.")
            runs = (
                f"MNN opens a model through its {path.name}. Create it from a preset; it is "
                "written when you save (Ctrl+S)."
            )
        self.explanation.setText(runs)

    def set_presets(self, presets: Sequence[Preset]) -> None:
        """The presets that set something in a file of this side."""
        fill_presets(self.presets, [p for p in presets if preset_values(p, self.scope)])
        self.create_button.setEnabled(self.presets.count() > 0)

    def _on_create(self) -> None:
        preset = self.presets.currentData()
        if isinstance(preset, Preset):
            self.chosen.emit(preset)
