"""The Tune page's plan form: which values a sweep measures, how long it runs, and
with which sampler (greedy by default, as `draftdeck tune`; or the recipe's, `--sample`)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRegularExpression, Qt
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.tune_follow import follow_recipe
from app.core.measure.tune_plan import (
    DEFAULT_PROMPTS,
    SweepPlan,
    ThreadCount,
    prompts_from_text,
    temperatures_from_text,
    with_sampling,
)
from app.core.recipe.files import target_sampler
from app.core.recipe.sampler_seed import seed_for
from app.core.recipe.sampler_settings import SamplerSettings
from app.ui.base.labels import wrap_to_width
from app.ui.base.scheme import colours

SAMPLE_TIP = (
    "Off (greedy): the target's most likely token every time; speculative output then "
    "equals plain output when the target's recipe verifies exactly (not with memory "
    "low).\nOn: draw as the target's recipe says; speculative sampling keeps the "
    "target's distribution."
)
SEED_TIP = "Empty: a seed is chosen at Start and shown; type it here to repeat the draws."
ADAPTIVE_TIP = (
    "Also measure adaptive drafting up to the longest draft length: DraftDeck picks each "
    "round's length and steps aside to plain decoding when drafting does not pay. Apply "
    "Best then also turns it on or off for the draft pack (MNN and TokForge always draft "
    "the full length)."
)
TEMPERATURES_TIP = (
    "Also measure at these temperatures (e.g. 0.5, 1.2). Measured and shown, never "
    "applied: a temperature changes what the pair writes, not only how fast."
)


class PlanForm(QWidget):
    """Ranges and choices of the swept settings, the run lengths, the prompts, and the
    Quick and Thorough presets (the page fills those from the pair's recipes)."""

    def __init__(self, cores: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cores = cores
        self.d_min, self.d_max = self._spin(1, 8, 1), self._spin(1, 8, 4)
        self.dt_min, self.dt_max = self._spin(1, cores, 1), self._spin(1, cores, 1)
        self.tt_min, self.tt_max = self._spin(1, cores, 1), self._spin(1, cores, 1)
        self.precisions = {p: QCheckBox(p) for p in ("low", "high")}
        self.memories = {m: QCheckBox(m) for m in ("low", "normal")}
        self.adaptive = QCheckBox("Also adaptive drafting, up to the longest length")
        self.adaptive.setToolTip(ADAPTIVE_TIP)
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
        self.sample = QCheckBox("Measure with the recipe's sampler")
        self.sample.setToolTip(SAMPLE_TIP)
        self.seed = QLineEdit()
        self.seed.setPlaceholderText("auto")
        self.seed.setToolTip(SEED_TIP)
        # 18 digits: any of them fits the engine's 63-bit seeds.
        self.seed.setValidator(QRegularExpressionValidator(QRegularExpression(r"\d{0,18}")))
        self.temperatures = QLineEdit()
        self.temperatures.setPlaceholderText("none")
        self.temperatures.setToolTip(TEMPERATURES_TIP)
        self.sampler_note = wrap_to_width(QLabel())  # a recipe's path may be long
        self.sampler_note.setObjectName("pageHint")
        self.sampler_note.setTextFormat(Qt.TextFormat.RichText)  # a problem is coloured
        self.recipe_sampler: SamplerSettings | None = None  # None: unread, or unreadable
        # A thread count the engine holds to the cores, or one above them, said here.
        self.threads_note = wrap_to_width(QLabel())
        self.threads_note.setObjectName("pageHint")
        self.threads_note.hide()
        self.recipe_error = ""
        # The recipes' values the plan shown was made from (None: no pair's yet).
        self.recipe_values: dict[str, Any] | None = None

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
        form.addWidget(self.adaptive, 5, 0, 1, 4)
        form.addWidget(QLabel("Tokens a run"), 6, 0)
        form.addWidget(self.tokens, 6, 1)
        form.addWidget(QLabel("Repeats"), 6, 2)
        form.addWidget(self.repeats, 6, 3)
        form.addWidget(QLabel("Seconds a setting"), 7, 0)
        form.addWidget(self.budget, 7, 1)
        form.addWidget(QLabel("Min s a run"), 7, 2)
        form.addWidget(self.min_run, 7, 3)
        form.addWidget(self.sample, 8, 0, 1, 4)
        form.addWidget(QLabel("Seed"), 9, 0)
        form.addWidget(self.seed, 9, 1, 1, 3)
        form.addWidget(QLabel("Temperatures"), 10, 0)
        form.addWidget(self.temperatures, 10, 1, 1, 3)
        presets = QHBoxLayout()
        for button in (self.quick_button, self.thorough_button):
            presets.addWidget(button)
        presets.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(presets)
        layout.addLayout(form)
        layout.addWidget(self.threads_note)
        layout.addWidget(self.sampler_note)
        layout.addWidget(QLabel("Prompts"))
        layout.addWidget(self.prompts, 1)
        self.sample.toggled.connect(self._show_sampling)
        self.temperatures.textChanged.connect(self._show_sampling)
        self._show_sampling()

    @staticmethod
    def _spin(low: int, high: int, value: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setValue(min(max(value, low), high))
        return spin

    def show_plan(self, plan: SweepPlan, recipe: Mapping[str, Any] | None = None) -> None:
        """Show `plan`; `recipe`: the recipes' values it was made from (recipe_defaults),
        which follow_recipe moves on from when they change."""
        if recipe is not None:
            self.recipe_values = dict(recipe)
        pairs = (
            (self.d_min, self.d_max, plan.draft_lengths),
            (self.dt_min, self.dt_max, plan.draft_threads),
            (self.tt_min, self.tt_max, plan.target_threads),
        )
        for low, high, values in pairs:
            if low is not self.d_min:
                # A recipe may ask for more threads than cores, and runs so: the form
                # must be able to hold what is measured as the current recipe.
                for spin in (low, high):
                    spin.setMaximum(max(self.cores, *values))
            low.setValue(min(values))
            high.setValue(max(values))
        for name, box in self.precisions.items():
            box.setChecked(name in plan.draft_precisions)
        for name, box in self.memories.items():
            box.setChecked(name in plan.draft_memories)
        self.adaptive.setChecked(plan.adaptive)
        self.tokens.setValue(plan.tokens)
        self.repeats.setValue(plan.repeats)
        self.budget.setValue(round(plan.budget_seconds))
        self.min_run.setValue(plan.min_run_seconds)

    def follow_recipe(self, now: Mapping[str, Any]) -> bool:
        """The recipes now run with `now` (recipe_defaults): every range or choice that
        holds only the value they ran with before moves to theirs now (tune_follow.py);
        True when the form changed."""
        was = self.recipe_values
        if was is None or dict(now) == was:
            return False
        plan = self.current_plan()
        followed = follow_recipe(plan, was, now)
        self.show_plan(followed, now)
        return followed != plan

    def show_threads(self, counts: list[ThreadCount]) -> None:
        """Say which thread counts are not simply the recipe files' (capped to the
        cores, or above them), so the measured "current recipe" is what runs."""
        notes = [note for count in counts if (note := count.note())]
        self.threads_note.setText("\n".join(notes))
        self.threads_note.setVisible(bool(notes))

    def read_recipe(self, target: Path | None) -> None:
        """The sampler of the target's run recipe (the one a sampled sweep decodes with);
        one that cannot be read turns the box off, saying why."""
        self.recipe_sampler, self.recipe_error = target_sampler(target)
        self.sample.setEnabled(self.recipe_sampler is not None)
        if self.recipe_sampler is None:
            self.sample.setChecked(False)
        self.sample.setToolTip(
            f"{self.recipe_error}. Measuring greedy." if self.recipe_error else SAMPLE_TIP
        )
        self._show_sampling()

    def sampler(self) -> SamplerSettings | None:
        """The sampler the plan measures with (None: greedy)."""
        return self.recipe_sampler if self.sample.isChecked() else None

    def _show_sampling(self) -> None:
        sampler = self.sampler()
        self.seed.setEnabled(sampler is not None and not sampler.is_greedy)
        self.temperatures.setEnabled(sampler is not None)
        if self.recipe_error:
            text = f"<span style='color:{colours().error}'>⚠ {escape(self.recipe_error)}.</span>"
        elif sampler is None:
            text = "Greedy: the most likely token every time."
        else:
            text = f"Sampler: {escape(sampler.describe())}."
            try:
                if temperatures_from_text(self.temperatures.text()):
                    text += " Temperatures are measured, never applied: Apply Best sets speed only."
            except ValueError as exc:
                text += f" <span style='color:{colours().error}'>⚠ Temperatures: {exc}.</span>"
        self.sampler_note.setText(text)

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
            adaptive=self.adaptive.isChecked(),
        )

    def measured_plan(self) -> SweepPlan:
        """The plan to run: current_plan with the chosen sampler, its seed picked now
        when none was typed (so it can be shown), and the extra temperatures. A
        ValueError says what in the sampling fields is wrong."""
        plan = self.current_plan()
        sampler = self.sampler()
        if sampler is None:
            return plan
        typed = self.seed.text()
        seed = seed_for(sampler, int(typed) if typed else None)
        temperatures = temperatures_from_text(self.temperatures.text())
        return with_sampling(plan, sampler, temperatures, seed)
