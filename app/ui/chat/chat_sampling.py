"""The Chat page's sampler controls: the recipe's sampler or greedy, a seed, and a line
saying which sampler the next reply uses.

The choice travels with each Generate request, so switching never reloads the pair.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import QRegularExpression, Qt
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from app.core.recipe.files import target_sampler
from app.core.recipe.sampler_settings import SamplerSettings
from app.ui.base.labels import wrap_to_width
from app.ui.base.scheme import colours

# The combo's items, short: the options row must fit a 1024 px window (the tooltip and
# the note below say what greedy is for).
SAMPLER_CHOICES = ("Recipe sampler", "Greedy (exact)")
GREEDY_INDEX = SAMPLER_CHOICES.index("Greedy (exact)")
RECIPE_INDEX = SAMPLER_CHOICES.index("Recipe sampler")
SAMPLER_TIP = (
    "Greedy: the target's most likely token every time; use it to compare speeds "
    "exactly.\nRecipe sampler: draws as the recipe says; speculative sampling keeps the "
    "target's distribution exactly."
)
SEED_TIP = (
    "Empty: a fresh seed for each reply. Every reply's figures show the seed it used: "
    "type it here to repeat that reply (with Adaptive drafting off: adaptive lengths "
    "follow the machine's speed, so the same seed may draw other text)."
)
SEED_PLACEHOLDER = "random"


class SamplerControls(QWidget):
    """The switch and the seed field; `note` is the line saying what is in use, for the
    page to place."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choice = QComboBox()
        self.choice.addItems(SAMPLER_CHOICES)
        self.choice.setToolTip(SAMPLER_TIP)
        self.seed_edit = QLineEdit()
        self.seed_edit.setPlaceholderText(SEED_PLACEHOLDER)
        self.seed_edit.setToolTip(SEED_TIP)
        # Seeds are whole numbers >= 0 (numpy's SeedSequence); 19 digits hold any 63-bit one.
        self.seed_edit.setValidator(
            QRegularExpressionValidator(QRegularExpression(r"\d{0,19}"), self.seed_edit)
        )
        metrics = self.seed_edit.fontMetrics()
        self.seed_edit.setMinimumWidth(metrics.horizontalAdvance(SEED_PLACEHOLDER) + 16)
        self.seed_edit.setMaximumWidth(metrics.horizontalAdvance("0" * 19) + 16)
        seed_label = QLabel("Seed")
        seed_label.setBuddy(self.seed_edit)
        seed_label.setToolTip(SEED_TIP)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.choice)
        layout.addWidget(seed_label)
        layout.addWidget(self.seed_edit)
        self.note = wrap_to_width(QLabel())  # an unreadable recipe's path may be long
        self.note.setObjectName("pageHint")
        self.note.setTextFormat(Qt.TextFormat.RichText)  # the warning is coloured
        self.recipe_sampler: SamplerSettings | None = None  # None: none read, or unreadable
        self.recipe_error = ""
        self.choice.currentIndexChanged.connect(self._show)
        self.seed_edit.textChanged.connect(self._show)
        self._show()

    def read_recipe(self, target: Path | None) -> None:
        """The sampler of the target's run recipe (the same one the pair loads with)."""
        self.recipe_sampler, self.recipe_error = target_sampler(target)
        self._show()

    @property
    def greedy_chosen(self) -> bool:
        return self.choice.currentIndex() == GREEDY_INDEX

    def sampler(self) -> SamplerSettings | None:
        """What a Generate request carries: None for greedy (chosen, or the fallback)."""
        return None if self.greedy_chosen else self.recipe_sampler

    def seed(self) -> int | None:
        text = self.seed_edit.text()
        return int(text) if text else None

    def _show(self) -> None:
        greedy = self.greedy_chosen
        self.seed_edit.setEnabled(not greedy)  # greedy draws nothing: no seed to set
        if greedy:
            text = "Greedy (exact comparison): the target's most likely token every time."
        elif self.recipe_error:
            text = (
                f"<span style='color:{colours().error}'>⚠ {escape(self.recipe_error)}. "
                "Replies are greedy until the recipe is fixed.</span>"
            )
        elif self.recipe_sampler is None:
            text = ""
        elif self.recipe_sampler.is_greedy:
            text = f"Recipe sampler: {escape(self.recipe_sampler.describe())} (no random draws)."
        else:
            seed = self.seed()
            seed_words = f"seed {seed}" if seed is not None else "a fresh seed each reply"
            text = f"Sampling: {escape(self.recipe_sampler.describe())} · {seed_words}"
        self.note.setText(text)
