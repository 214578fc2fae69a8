"""One typed editor per schema field. "Not set" is a real choice: MNN's default applies."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from app.core.recipe.schema import Field

NOT_SET = object()


def field_tooltip(field: Field) -> str:
    default = "not set" if field.default == "" else repr(field.default)
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

    def set_problem(self, message: str | None) -> None:
        self.widget.setProperty("invalid", message is not None)
        self.widget.setToolTip(
            field_tooltip(self.field) + (f"\n\nProblem: {message}" if message else "")
        )
        style = self.widget.style()
        style.unpolish(self.widget)
        style.polish(self.widget)


class ChoiceEditor(FieldEditor):
    def __init__(self, field: Field) -> None:
        combo = QComboBox()
        default = field.default if field.default != "" else "none"
        combo.addItem(f"(not set: {default})", NOT_SET)
        for choice in field.choices:
            if choice:
                combo.addItem(choice, choice)
        super().__init__(field, combo)
        self.combo = combo
        combo.currentIndexChanged.connect(self._emit)

    def value(self) -> Any:
        return self.combo.currentData()

    def _show(self, value: Any) -> bool:
        index = self.combo.findData(value) if value is not NOT_SET else 0
        self.combo.setCurrentIndex(max(index, 0))
        return index >= 0


class BoolEditor(ChoiceEditor):
    def __init__(self, field: Field) -> None:
        super().__init__(
            Field(field.key, "choice", field.default, field.help, docs_note=field.docs_note)
        )
        self.field = field
        self.combo.addItem("true", True)
        self.combo.addItem("false", False)

    def _show(self, value: Any) -> bool:
        if value is NOT_SET:
            self.combo.setCurrentIndex(0)
            return True
        if not isinstance(value, bool):
            self.combo.setCurrentIndex(0)
            return False
        self.combo.setCurrentIndex(1 if value else 2)
        return True


class NumberEditor(FieldEditor):
    """Whole numbers in a QSpinBox, decimals in a QDoubleSpinBox. One step below the
    allowed range stands for "not set"."""

    def __init__(self, field: Field) -> None:
        self.whole = field.kind == "int"
        low = field.minimum if field.minimum is not None else 0
        high = field.maximum if field.maximum is not None else 1_000_000
        spin: QSpinBox | QDoubleSpinBox
        if self.whole:
            spin = QSpinBox()
            spin.setRange(int(low) - 1, int(high))
        else:
            spin = QDoubleSpinBox()
            spin.setDecimals(3)
            spin.setSingleStep(0.05)
            spin.setRange(low - 0.001, high)
        spin.setSpecialValueText(f"(not set: {field.default})")
        super().__init__(field, spin)
        self.spin = spin
        spin.valueChanged.connect(self._emit)

    def value(self) -> Any:
        return NOT_SET if self.spin.value() == self.spin.minimum() else self.spin.value()

    def _show(self, value: Any) -> bool:
        kinds: tuple[type, ...] = (int,) if self.whole else (int, float)
        ok = isinstance(value, kinds) and not isinstance(value, bool)
        in_range = ok and self.spin.minimum() < value <= self.spin.maximum()
        shown = value if in_range else self.spin.minimum()
        if isinstance(self.spin, QSpinBox):
            self.spin.setValue(int(shown))
        else:
            self.spin.setValue(float(shown))
        return value is NOT_SET or in_range


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
        self.edit.setText(value if isinstance(value, str) else "")
        return value is NOT_SET or isinstance(value, str)


def make_editor(field: Field) -> FieldEditor:
    kinds: dict[str, Callable[[Field], FieldEditor]] = {
        "choice": ChoiceEditor,
        "bool": BoolEditor,
        "int": NumberEditor,
        "float": NumberEditor,
        "path": PathEditor,
    }
    return kinds[field.kind](field)
