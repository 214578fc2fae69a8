"""The typed form of one recipe file: a row per setting, and for the target the sampler
Chat samples with (every setting MNN's sampler reads, under MNN's key spellings).

A setting MNN reads under two spellings (top_k or topK, see core/recipe/sampler_fields)
is one row, labelled with the spelling the file's value is read from; an edit goes to
that key, so a file written with MNN's older spellings keeps them. Rows of settings the
chosen sampler does not read are greyed (their values stay, and count again when the
sampler changes); the line above them says what the sampler does with the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.core.recipe.sampler_fields import SAMPLER_FORM_KEYS, keys_used, spelling_in_use
from app.core.recipe.sampler_settings import sampler_settings
from app.core.recipe.schema import DRAFT, DRAFT_FORM_KEYS, FIELDS, TARGET_FORM_KEYS
from app.ui.base.labels import wrap_to_width
from app.ui.recipes.recipe_fields import NOT_SET, FieldEditor, json_text, make_editor


class RecipeForm(QWidget):
    """The rows of one file's settings; `edited(key)` when the user changes the row of
    setting `key` (its form key: the newer spelling of a pair)."""

    edited = Signal(str)

    def __init__(self, scope: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editors: dict[str, FieldEditor] = {}
        self.labels: dict[str, QLabel] = {}
        self.spelling: dict[str, str] = {}  # form key -> the key the file's value is under
        self._data: dict[str, Any] = {}
        run_keys: tuple[str, ...] = DRAFT_FORM_KEYS
        sampler_keys: tuple[str, ...] = ()
        if scope != DRAFT:  # the target's sampler is what Chat samples with: a section of its own
            run_keys = tuple(k for k in TARGET_FORM_KEYS if k not in SAMPLER_FORM_KEYS)
            sampler_keys = SAMPLER_FORM_KEYS
        # The rows, locked as one while the JSON does not parse (an edit would overwrite it).
        self.fields_box = QWidget()
        fields = QVBoxLayout(self.fields_box)
        fields.setContentsMargins(0, 0, 0, 0)
        fields.addLayout(self._rows(run_keys))
        self.has_sampler = bool(sampler_keys)
        self.sampler_line = QLabel()
        self.sampler_line.setObjectName("pageHint")
        wrap_to_width(self.sampler_line)
        self.sampler_box = QGroupBox("Sampler (Chat's recipe sampler)")
        sampler_layout = QVBoxLayout(self.sampler_box)
        sampler_layout.addWidget(self.sampler_line)
        sampler_layout.addLayout(self._rows(sampler_keys))
        self.sampler_box.setVisible(self.has_sampler)
        self.sampler_box.setToolTip(
            "What Chat's Recipe sampler draws with (unless Greedy is chosen there); bench and "
            "tune decode greedily unless given --sample. Empty rows take MNN's default."
        )
        fields.addWidget(self.sampler_box)
        self.others = QLabel()
        wrap_to_width(self.others)
        self.others.setObjectName("pageHint")
        self.problem_label = QLabel()
        wrap_to_width(self.problem_label)
        self.problem_label.setTextFormat(Qt.TextFormat.RichText)
        # The rows scroll (the target's do not fit 700 px); what is wrong stays in sight.
        rows = QWidget()
        self._rows_layout = QVBoxLayout(rows)
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self._rows_layout.addWidget(self.fields_box)
        self._rows_layout.addStretch(1)
        self.rows_area = QScrollArea()
        self.rows_area.setWidget(rows)
        self.rows_area.setWidgetResizable(True)
        self.rows_area.setFrameShape(QScrollArea.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.rows_area, 1)
        layout.addWidget(self.others)
        layout.addWidget(self.problem_label)

    def add_section(self, section: QWidget) -> None:
        """A section below the rows, scrolling with them; not locked with them while the
        JSON does not parse (the draft's drafting settings: a file of their own)."""
        self._rows_layout.insertWidget(self._rows_layout.count() - 1, section)

    def _rows(self, keys: tuple[str, ...]) -> QFormLayout:
        form = QFormLayout()
        for key in keys:
            editor = make_editor(FIELDS[key])
            editor.changed.connect(lambda key=key: self.edited.emit(key))
            self.editors[key] = editor
            label = QLabel(key)
            label.setToolTip(editor.widget.toolTip())
            self.labels[key] = label
            form.addRow(label, editor.widget)
        return form

    def show_data(self, data: Mapping[str, Any]) -> set[str]:
        """Show a document; the form keys whose value the row cannot hold."""
        self._data = dict(data)
        unshowable = set()
        for key, editor in self.editors.items():
            in_file = self.spelling[key] = spelling_in_use(data, key)
            self.labels[key].setText(in_file)
            if not editor.set_value(data.get(in_file, NOT_SET)):
                unshowable.add(key)
        self._show_sampler(data)
        return unshowable

    def edited_data(self, key: str) -> dict[str, Any]:
        """The document after the user's edit of row `key`, under the key in use."""
        value = self.editors[key].value()
        after = dict(self._data)
        in_file = self.spelling.get(key, key)
        if value is NOT_SET:
            after.pop(in_file, None)
        else:
            after[in_file] = value
        return after

    def form_key(self, key: str) -> str | None:
        """The row showing the file's key `key` (an older spelling's row too), if any."""
        return next((k for k, used in self.spelling.items() if used == key), None)

    def unlisted(self, data: Mapping[str, Any]) -> list[str]:
        """The file's keys no row shows (the JSON edits them)."""
        shown = set(self.spelling.values())
        return [key for key in data if key not in shown]

    def _show_sampler(self, data: Mapping[str, Any]) -> None:
        if not self.has_sampler:
            return
        try:
            described = f"Chat samples with {sampler_settings(data).describe()}"
        except ValueError as exc:
            described = f"MNN cannot build this sampler: {exc}"
        self.sampler_line.setText(f"{described}. Greyed: not read by this sampler.")
        used = keys_used(data)
        for key in SAMPLER_FORM_KEYS:
            self.labels[key].setEnabled(self.spelling[key] in used or key in used)

    def set_problems(self, by_key: Mapping[str, str], unshowable: set[str]) -> None:
        """Mark rows: a problem of the file's key, or a value the row cannot hold."""
        for key, editor in self.editors.items():
            problem = by_key.get(self.spelling.get(key, key))
            if problem is None and key in unshowable:
                value = self._data[self.spelling.get(key, key)]
                problem = f"{json_text(value)} cannot be shown here; edit the JSON"
            editor.set_problem(problem)
