"""The Tune page's plan form: which values a sweep measures, and how long it runs."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.tune_plan import DEFAULT_PROMPTS, SweepPlan, prompts_from_text


class PlanForm(QWidget):
    """Ranges and choices of the swept settings, the run lengths, the prompts, and the
    Quick and Thorough presets (the page fills those from the pair's recipes)."""

    def __init__(self, cores: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.d_min, self.d_max = self._spin(1, 8, 1), self._spin(1, 8, 4)
        self.dt_min, self.dt_max = self._spin(1, cores, 1), self._spin(1, cores, 1)
        self.tt_min, self.tt_max = self._spin(1, cores, 1), self._spin(1, cores, 1)
        self.precisions = {p: QCheckBox(p) for p in ("low", "high")}
        self.memories = {m: QCheckBox(m) for m in ("low", "normal")}
        self.tokens = self._spin(16, 4096, 96)
        self.repeats = self._spin(1, 10, 1)
        self.budget = self._spin(1, 600, 20)
        self.budget.setToolTip(
            "Seconds a setting may take: rounds continue until its uplift's 95 % interval "
            "is within +-5 % or this is spent"
        )
        self.min_run = QDoubleSpinBox()
        self.min_run.setRange(0.0, 10.0)
        self.min_run.setSingleStep(0.1)
        self.min_run.setValue(0.5)
        self.min_run.setToolTip(
            "Each run repeats its generation until it has decoded this long: shorter runs "
            "measure the timer more than the decoder"
        )
        self.prompts = QPlainTextEdit("\n\n".join(DEFAULT_PROMPTS))
        self.prompts.setToolTip(
            "The prompts every setting is measured on, separated by an empty line"
        )
        self.quick_button = QPushButton("Quick")
        self.thorough_button = QPushButton("Thorough")

        form = QGridLayout()
        rows = [
            ("Draft length", self.d_min, self.d_max),
            ("Draft threads", self.dt_min, self.dt_max),
            ("Target threads", self.tt_min, self.tt_max),
        ]
        for row, (label, low, high) in enumerate(rows):
            form.addWidget(QLabel(label), row, 0)
            form.addWidget(low, row, 1)
            form.addWidget(QLabel("to"), row, 2)
            form.addWidget(high, row, 3)
        form.addWidget(QLabel("Draft precision"), 3, 0)
        form.addWidget(self.precisions["low"], 3, 1)
        form.addWidget(self.precisions["high"], 3, 3)
        form.addWidget(QLabel("Draft memory"), 4, 0)
        form.addWidget(self.memories["low"], 4, 1)
        form.addWidget(self.memories["normal"], 4, 3)
        form.addWidget(QLabel("Tokens a run"), 5, 0)
        form.addWidget(self.tokens, 5, 1)
        form.addWidget(QLabel("Repeats"), 5, 2)
        form.addWidget(self.repeats, 5, 3)
        form.addWidget(QLabel("Seconds a setting"), 6, 0)
        form.addWidget(self.budget, 6, 1)
        form.addWidget(QLabel("Min s a run"), 6, 2)
        form.addWidget(self.min_run, 6, 3)
        presets = QHBoxLayout()
        for button in (self.quick_button, self.thorough_button):
            presets.addWidget(button)
        presets.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(presets)
        layout.addLayout(form)
        layout.addWidget(QLabel("Prompts"))
        layout.addWidget(self.prompts, 1)

    @staticmethod
    def _spin(low: int, high: int, value: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setValue(min(max(value, low), high))
        return spin

    def show_plan(self, plan: SweepPlan) -> None:
        pairs = (
            (self.d_min, self.d_max, plan.draft_lengths),
            (self.dt_min, self.dt_max, plan.draft_threads),
            (self.tt_min, self.tt_max, plan.target_threads),
        )
        for low, high, values in pairs:
            low.setValue(min(values))
            high.setValue(max(values))
        for name, box in self.precisions.items():
            box.setChecked(name in plan.draft_precisions)
        for name, box in self.memories.items():
            box.setChecked(name in plan.draft_memories)
        self.tokens.setValue(plan.tokens)
        self.repeats.setValue(plan.repeats)
        self.budget.setValue(round(plan.budget_seconds))
        self.min_run.setValue(plan.min_run_seconds)

    def current_plan(self) -> SweepPlan:
        def span(low: QSpinBox, high: QSpinBox) -> tuple[int, ...]:
            a, b = sorted((low.value(), high.value()))
            return tuple(range(a, b + 1))

        return SweepPlan(
            draft_lengths=span(self.d_min, self.d_max),
            draft_threads=span(self.dt_min, self.dt_max),
            draft_precisions=tuple(n for n, b in self.precisions.items() if b.isChecked()),
            draft_memories=tuple(n for n, b in self.memories.items() if b.isChecked()),
            target_threads=span(self.tt_min, self.tt_max),
            prompts=prompts_from_text(self.prompts.toPlainText()),
            tokens=self.tokens.value(),
            repeats=self.repeats.value(),
            budget_seconds=float(self.budget.value()),
            min_run_seconds=self.min_run.value(),
        )
