"""Record a phone result: the figures TokForge shows after a run (plain and speculative
tok/s, the draft length) and the pair it ran, for one phone (its adb model name)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.phone_results import MAX_TOK_S
from app.core.pack.library import PackEntry
from app.ui.base.labels import wrap_to_width
from app.ui.phone.results_state import NewResult

HINT = (
    "Enter what TokForge (or MNN Chat) showed after a run on the phone: the decode speed "
    "with the draft off (plain) and on (speculative), and the draft length it used. "
    "DraftDeck keeps the forecast it makes now beside it, so you can see how far it was off."
)


def _rate() -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, MAX_TOK_S)
    box.setDecimals(2)
    box.setSuffix(" tok/s")
    box.setSpecialValueText("not given")  # 0 is no figure: OK stays off until both are given
    return box


def index_of(combo: QComboBox, pack: Path | None) -> int:
    """The row of this pack folder (-1: not listed). findData cannot compare paths."""
    for i in range(combo.count()):
        if pack is not None and combo.itemData(i) == pack:
            return i
    return -1


class RecordResultDialog(QDialog):
    def __init__(
        self,
        phone: str,
        packs: Sequence[PackEntry],
        pair: tuple[Path | None, Path | None],
        draft_length: int | None,
        phone_ram: int = 0,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Record a Phone Result")
        self.phone_ram = phone_ram  # the attached phone's, named `phone`
        self._attached = phone
        hint = wrap_to_width(QLabel(HINT))
        hint.setObjectName("pageHint")
        self.phone = QLineEdit(phone)
        self.phone.setPlaceholderText("the phone's model, e.g. Pixel 8")
        self.target, self.draft = QComboBox(), QComboBox()
        readable = [p for p in packs if p.info is not None]
        for combo, wanted in ((self.target, pair[0]), (self.draft, pair[1])):
            for entry in readable:
                combo.addItem(entry.name, entry.path)
            combo.setCurrentIndex(index_of(combo, wanted))
        self.plain, self.spec = _rate(), _rate()
        self.draft_length = QSpinBox()
        self.draft_length.setRange(1, 16)
        self.draft_length.setValue(draft_length or 3)
        self.draft_length.setToolTip("draft_predict_length: tokens the draft proposes a round")
        form = QFormLayout()
        form.addRow("&Phone:", self.phone)
        form.addRow("&Target:", self.target)
        form.addRow("&Draft:", self.draft)
        form.addRow("P&lain decode:", self.plain)
        form.addRow("&Speculative decode:", self.spec)
        form.addRow("Draft le&ngth:", self.draft_length)
        self.problem = wrap_to_width(QLabel())
        self.problem.setObjectName("warning")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Record")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        for signal in (
            self.phone.textChanged,
            self.plain.valueChanged,
            self.spec.valueChanged,
            self.target.currentIndexChanged,
            self.draft.currentIndexChanged,
        ):
            signal.connect(self._check)
        self._check()
        self.resize(480, self.sizeHint().height())

    def why_not(self) -> str:
        """What is missing before the result can be recorded ("" when nothing is)."""
        if not self.phone.text().strip():
            return "Name the phone (its model, as the Phone page lists it)."
        if self.target.currentData() is None or self.draft.currentData() is None:
            return "Choose the target and the draft the phone ran."
        if self.target.currentData() == self.draft.currentData():
            return "The target and the draft are the same pack."
        if self.plain.value() <= 0 or self.spec.value() <= 0:
            return "Enter both speeds the phone showed."
        return ""

    def _check(self) -> None:
        problem = self.why_not()
        self.problem.setText(problem)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)

    def new_result(self) -> NewResult:
        name = self.phone.text().strip()
        return NewResult(
            name,
            Path(self.target.currentData()),
            Path(self.draft.currentData()),
            self.plain.value(),
            self.spec.value(),
            self.draft_length.value(),
            self.phone_ram if name == self._attached else 0,  # RAM of that phone only
        )
