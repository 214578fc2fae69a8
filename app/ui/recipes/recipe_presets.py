"""The Recipes page's presets: the list above the tabs with its Apply action and the
line saying what the chosen one sets, and the list a missing file is started from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolBar, QWidget

from app.core.infra.errors import FileError
from app.core.pack.bundle import read_bundle
from app.core.recipe.presets import Preset, presets_for
from app.core.recipe.wording import preset_text
from app.ui.base.verdict_label import VerdictLabel

PRESET_NAME_CHARS = 26  # a list's width; its items' tooltips say the rest


def preset_combo() -> QComboBox:
    """A preset list whose long names (a pack's own) are cut rather than widening a row."""
    combo = QComboBox()
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(PRESET_NAME_CHARS)
    return combo


PACK_LABEL = "The pack's recommendation"


def preset_label(preset: Preset) -> str:
    """The name in the list: the pack's own under a short label (its draft's name made
    it "qwen3-draft-noisy's own recommenda…"); the tooltip has the full name."""
    return PACK_LABEL if preset.key == "pack" else preset.name


def fill_presets(combo: QComboBox, presets: Sequence[Preset]) -> None:
    """List the presets, each with its full name and what it does as its tooltip."""
    combo.clear()
    for preset in presets:
        combo.addItem(preset_label(preset), preset)
        tip = f"{preset.name}\n{preset_text(preset)}"
        combo.setItemData(combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)


def draft_presets(draft: Path) -> list[Preset]:
    """The presets for a draft pack: its own recommendation first, if it has one."""
    try:
        info = read_bundle(draft)
    except FileError:
        info = None
    return presets_for(info)


class PresetChooser(QWidget):
    """ "Preset: [list] Apply Preset"; `note` (placed by the page) says what it sets."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = preset_combo()
        self.combo.setToolTip("Apply a preset to both files (undo takes it back)")
        self.action = QAction("Apply Preset", self)
        # What the chosen preset sets, in one line; its description and the pack's
        # notes behind More (a pack's four notes would squeeze the form at 1024x700).
        self.note = VerdictLabel()
        self.note.shown.setObjectName("pageHint")
        self.combo.currentIndexChanged.connect(self._on_chosen)
        bar = QToolBar()
        bar.addAction(self.action)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Preset:"))
        layout.addWidget(self.combo)
        layout.addWidget(bar)

    def chosen(self) -> Preset | None:
        preset = self.combo.currentData()
        return preset if isinstance(preset, Preset) else None

    def _on_chosen(self, _index: int) -> None:
        preset = self.chosen()
        self.note.setText(preset_text(preset) if preset else "")
        self.combo.setToolTip(
            f"{preset.name}: Apply Preset sets it in both files (undo takes it back)"
            if preset
            else "Apply a preset to both files (undo takes it back)"
        )
