"""One typed editor per schema field. "Not set" is a real choice: MNN's default applies."""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from app.core.recipe.schema import Field

NOT_SET = object()


def json_text(value: Any) -> str:
    """A value as the JSON file spells it (never a Python repr)."""
    return json.dumps(value, ensure_ascii=False)


def invalid_text(value: Any) -> str:
    """How a field shows a value from the JSON that it cannot hold."""
    return f"{json_text(value)} (not valid)"


def field_tooltip(field: Field) -> str:
    default = "not set" if field.default == "" else json_text(field.default)
    note = f"\n{field.docs_note}" if field.docs_note else ""
    return f"{field.help}\nMNN default: {default}.{note}"


class FieldEditor(QObject):
    """Wraps a widget; `changed` fires on user edits only (programmatic sets are silent)."""

    changed = Signal()

    def __init__(self, field: Field, widget: QWidget) -> None:
        super().__init__()
        self.field = field
        self.widget = widget
        widget.setObjectName(f"field_{field.key}")
        widget.setToolTip(field_tooltip(field))
        self._quiet = False

    def _emit(self, *_: object) -> None:
        if not self._quiet:
            self.changed.emit()

    @abstractmethod
    def value(self) -> Any:
        """The widget's value, or NOT_SET."""

    @abstractmethod
    def _show(self, value: Any) -> bool:
        """Show `value`; False when the widget cannot represent it."""

    def set_value(self, value: Any) -> bool:
        """Show a value (NOT_SET for absent); False if the widget cannot represent it."""
        self._quiet = True
        try:
            return self._show(value)
        finally:
            self._quiet = False

    def set_not_set_text(self, text: str) -> None:
        """How "not set" reads (a layer over a recipe: "(as on the phone: 4)")."""

    def set_problem(self, message: str | None) -> None:
        self.widget.setProperty("invalid", message is not None)
        self.widget.setToolTip(
            field_tooltip(self.field) + (f"\n\nProblem: {message}" if message else "")
        )
        style = self.widget.style()
        style.unpolish(self.widget)
        style.polish(self.widget)


class ChoiceEditor(FieldEditor):
    """A list of choices. A value the list lacks is shown as an extra, marked last item
    that keeps the value until the user picks another."""

    def __init__(self, field: Field) -> None:
        combo = QComboBox()
        default = field.default if field.default != "" else "none"
        combo.addItem(f"(not set: {default})", NOT_SET)
        for choice in field.choices:
            if choice:
                combo.addItem(choice, choice)
        super().__init__(field, combo)
        self.combo = combo
        self._held: Any = NOT_SET  # the JSON's value when the list lacks it
        combo.currentIndexChanged.connect(self._emit)

    def set_not_set_text(self, text: str) -> None:
        self.combo.setItemText(0, text)

    def value(self) -> Any:
        if self._held is not NOT_SET and self.combo.currentIndex() == self.combo.count() - 1:
            return self._held
        return self.combo.currentData()

    def _index_of(self, value: Any) -> int:
        return 0 if value is NOT_SET else self.combo.findData(value)

    def _show(self, value: Any) -> bool:
        if self._held is not NOT_SET:
            self.combo.removeItem(self.combo.count() - 1)
            self._held = NOT_SET
        index = self._index_of(value)
        if index < 0:
            self._held = value
            self.combo.addItem(invalid_text(value))
            index = self.combo.count() - 1
        self.combo.setCurrentIndex(index)
        return self._held is NOT_SET


class BoolEditor(ChoiceEditor):
    def __init__(self, field: Field) -> None:
        super().__init__(
            Field(field.key, "choice", field.default, field.help, docs_note=field.docs_note)
        )
        self.field = field
        self.combo.addItem("true", True)
        self.combo.addItem("false", False)

    def _index_of(self, value: Any) -> int:
        if value is NOT_SET:
            return 0
        return (1 if value else 2) if isinstance(value, bool) else -1


def _gap_step(value: float, not_set: float, least: float, steps: int) -> float | None:
    """Where the arrows go between "not set" and the least allowed value, over numbers
    only typing reaches (0 where 1 is the least); None: an ordinary step."""
    if steps > 0 and value == not_set:
        return least
    if steps < 0 and not_set < value <= least:
        return not_set
    return None


class _WholeSpin(QSpinBox):
    def __init__(self, least: float) -> None:
        super().__init__()
        self.least = least

    def stepBy(self, steps: int) -> None:
        target = _gap_step(self.value(), self.minimum(), self.least, steps)
        if target is None:
            super().stepBy(steps)
        else:
            self.setValue(int(target))


class _DecimalSpin(QDoubleSpinBox):
    def __init__(self, least: float) -> None:
        super().__init__()
        self.least = least

    def stepBy(self, steps: int) -> None:
        target = _gap_step(self.value(), self.minimum(), self.least, steps)
        if target is None:
            super().stepBy(steps)
        else:
            self.setValue(target)


class NumberEditor(FieldEditor):
    """Whole numbers in a QSpinBox, decimals in a QDoubleSpinBox. "Not set" is the step
    below both the allowed range and zero, so a typed 0 stays 0 (marked when the field
    needs more) instead of turning into "not set". A value the box cannot hold (text,
    too large) is shown in place of "not set", marked, until the user picks a number."""

    def __init__(self, field: Field) -> None:
        self.whole = field.kind == "int"
        unit = 1 if self.whole else 0.001  # the smallest step the box shows
        least = field.minimum if field.minimum is not None else 0
        low = min(least, 0) - unit
        high = field.maximum if field.maximum is not None else 1_000_000
        spin: QSpinBox | QDoubleSpinBox
        if self.whole:
            spin = _WholeSpin(least)
            spin.setRange(int(low), int(high))
        else:
            spin = _DecimalSpin(least)
            spin.setDecimals(3)
            spin.setSingleStep(0.05)
            spin.setRange(low, high)
        self._not_set_text = f"(not set: {field.default})"
        spin.setSpecialValueText(self._not_set_text)
        super().__init__(field, spin)
        self.spin = spin
        self._held: Any = NOT_SET  # the JSON's value when the box cannot hold it
        spin.valueChanged.connect(self._emit)

    def set_not_set_text(self, text: str) -> None:
        self._not_set_text = text
        if self._held is NOT_SET:
            self.spin.setSpecialValueText(text)

    def value(self) -> Any:
        return self._held if self.spin.value() == self.spin.minimum() else self.spin.value()

    def _show(self, value: Any) -> bool:
        kinds: tuple[type, ...] = (int,) if self.whole else (int, float)
        number = isinstance(value, kinds) and not isinstance(value, bool)
        shown = number and self.spin.minimum() < value <= self.spin.maximum()
        self._held = NOT_SET if shown else value
        held = self._held is not NOT_SET
        self.spin.setSpecialValueText(invalid_text(value) if held else self._not_set_text)
        target = value if shown else self.spin.minimum()
        if isinstance(self.spin, QSpinBox):
            self.spin.setValue(int(target))
        else:
            self.spin.setValue(float(target))
        return not held


class PathEditor(FieldEditor):
    def __init__(self, field: Field) -> None:
        edit = QLineEdit()
        edit.setPlaceholderText("(not set)")
        edit.setClearButtonEnabled(True)
        super().__init__(field, edit)
        self.edit = edit
        edit.textEdited.connect(self._emit)

    def value(self) -> Any:
        return self.edit.text() or NOT_SET

    def _show(self, value: Any) -> bool:
        text = value if isinstance(value, str) else "" if value is NOT_SET else json_text(value)
        if self.edit.text() != text:  # an unchanged text keeps the cursor where one types
            self.edit.setText(text)
        return value is NOT_SET or isinstance(value, str)


class NamesEditor(FieldEditor):
    """A list of names (mixed_samplers) typed as "topK, topP, temperature"."""

    def __init__(self, field: Field) -> None:
        edit = QLineEdit()
        edit.setPlaceholderText(f"(not set: {', '.join(field.default)})")
        edit.setClearButtonEnabled(True)
        super().__init__(field, edit)
        self.edit = edit
        edit.textEdited.connect(self._emit)

    def value(self) -> Any:
        names = [name for name in re.split(r"[,\s]+", self.edit.text()) if name]
        return names or NOT_SET

    def _show(self, value: Any) -> bool:
        names = isinstance(value, list) and all(isinstance(v, str) for v in value)
        text = ", ".join(value) if names else "" if value is NOT_SET else json_text(value)
        if self.edit.text() != text and self.value() != value:  # keeps the typing as typed
            self.edit.setText(text)
        return value is NOT_SET or names


def make_editor(field: Field) -> FieldEditor:
    kinds: dict[str, Callable[[Field], FieldEditor]] = {
        "choice": ChoiceEditor,
        "bool": BoolEditor,
        "int": NumberEditor,
        "float": NumberEditor,
        "path": PathEditor,
        "names": NamesEditor,
    }
    return kinds[field.kind](field)
