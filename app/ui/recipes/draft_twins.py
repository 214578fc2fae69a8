"""The Recipes page's line on the draft's recipe files: which one DraftDeck runs, and,
when the pack's config_cpu.json and draft_config_cpu.json differ, their diff and the
user's choice of which to keep (core/recipe/draft_recipes.py holds the rules)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.recipe.draft_recipes import DIFFER, DraftRecipes, draft_recipes, make_same
from app.core.recipe.files import backup_path
from app.ui.base.dialogs import ask, show_file_error
from app.ui.base.labels import wrap_to_width
from app.ui.recipes.recipe_undo import UndoKeysToPage

DIFF_LINES = 8  # the diff is a few keys; more scrolls rather than pushing the editors down


class DraftTwinsPanel(QWidget):
    made_same = Signal(object, object)  # the file replaced, and the one kept (Paths)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recipes: DraftRecipes | None = None
        self._editing = False
        self.rule = QLabel()
        self.rule.setObjectName("pageHint")
        wrap_to_width(self.rule)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.diff_view = QPlainTextEdit()
        self.diff_view.setObjectName("draftRecipesDiff")
        self.diff_view.setReadOnly(True)
        self.diff_view.setFont(mono)
        self.diff_view.setMaximumHeight(self.diff_view.fontMetrics().lineSpacing() * DIFF_LINES)
        self.keep_used = QPushButton()
        self.keep_other = QPushButton()
        self.keep_used.clicked.connect(lambda: self._ask_keep(used=True))
        self.keep_other.clicked.connect(lambda: self._ask_keep(used=False))
        buttons = QHBoxLayout()
        buttons.addWidget(self.keep_used)
        buttons.addWidget(self.keep_other)
        buttons.addStretch(1)
        self.choice = QWidget()  # the diff and the two answers, shown only when they differ
        choice_layout = QVBoxLayout(self.choice)
        choice_layout.setContentsMargins(0, 0, 0, 0)
        choice_layout.addWidget(self.diff_view)
        choice_layout.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.rule)
        layout.addWidget(self.choice)
        # Ctrl+Z here still undoes the draft recipe, as everywhere on the page.
        UndoKeysToPage(self).guard(self)
        self.choice.hide()

    def show_pack(self, pack: Path | None) -> DraftRecipes | None:
        """Read the pack's draft recipes again and say what they are."""
        self.recipes = None if pack is None else draft_recipes(pack)
        recipes = self.recipes
        differ = recipes is not None and recipes.state == DIFFER and recipes.other is not None
        self.rule.setText("" if recipes is None else recipes.rule_text())
        self.choice.setVisible(differ)
        if recipes is not None and recipes.other is not None and differ:
            self.diff_view.setPlainText(recipes.diff or recipes.summary())
            used, other = recipes.used.name, recipes.other.name
            self.keep_used.setText(f"Keep {used} (copy it over {other})")
            self.keep_other.setText(f"Keep {other} (copy it over {used})")
        self._update_buttons()
        return recipes

    def set_editing(self, editing: bool) -> None:
        """Unsaved edits to the draft recipe: choosing a file now would mix them up."""
        self._editing = editing
        self._update_buttons()

    def _update_buttons(self) -> None:
        why = "Save or revert the draft recipe's edits first." if self._editing else ""
        for button in (self.keep_used, self.keep_other):
            button.setEnabled(not self._editing)
            button.setToolTip(why)

    def _ask_keep(self, used: bool) -> None:
        recipes = self.recipes
        if recipes is None or recipes.other is None:
            return
        keep, replace = (recipes.used, recipes.other) if used else (recipes.other, recipes.used)
        ask(
            self,
            "Make the draft recipes the same",
            f"Replace {replace} with the recipe in {keep.name}? The current file is kept "
            f"as {backup_path(replace)}.",
            f"Keep {keep.name}",
            lambda: self._keep(keep, replace),
        )

    def _keep(self, keep: Path, replace: Path) -> None:
        try:
            make_same(keep, replace)
        except FileError as exc:
            show_file_error(self, "Draft recipes not made the same", exc)
            return
        finally:
            self.show_pack(replace.parent)
        self.made_same.emit(replace, keep)
