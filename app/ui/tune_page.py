"""The Tune page: measure recipe settings for the selected pair and apply the best."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import DraftDeckError, SpeculationCannotPay
from app.core.measure.tune import (
    DEFAULT_PROMPTS,
    Setting,
    SettingResult,
    SweepPlan,
    TuneRun,
    best_result,
    new_run_path,
    plan_for,
    recipe_defaults,
    rows,
    runs_dir,
)
from app.core.measure.tune_apply import (
    Snapshot,
    apply_refusal,
    apply_setting,
    planned_changes,
    restore,
)
from app.core.pack.compat import MEASURED_MNN, assess_paths
from app.core.recipe.schema import physical_cores
from app.ui import background
from app.ui.dialogs import ask, show_error
from app.ui.pair_selection import PairSelection
from app.ui.table_model import ColumnsModel, Index

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class ResultsModel(ColumnsModel):
    COLUMNS = (
        "d",
        "Draft threads",
        "Precision",
        "Memory",
        "Target threads",
        "Spec tok/s",
        "Plain tok/s (pooled)",
        "Uplift (median of pairs)",
        "95 % interval",
        "Pairs",
        "Acceptance",
        "Mean length",
        "c",
        "Predicted",
        "Break-even",
        "Lossless",
        "Verify agr.",
    )
    KEYS = (
        "draft_length",
        "draft_threads",
        "draft_precision",
        "draft_memory",
        "target_threads",
        "spec_tok_s",
        "baseline_tok_s",
        "uplift",
        "uplift_interval",
        "pairs",
        "acceptance",
        "mean_accepted_length",
        "cost_ratio",
        "predicted_speedup",
        "break_even_acceptance",
        "lossless",
        "verify_agreement",
    )

    def __init__(self) -> None:
        super().__init__()
        self.results: list[SettingResult] = []
        self._rows: list[dict[str, Any]] = []
        self.best: SettingResult | None = None

    HEADER_TIPS: ClassVar[dict[str, str]] = {
        "baseline_tok_s": (
            "Plain decoding depends only on the target's settings: the median of the plain "
            "runs of every row with these target settings (the same for all of them)"
        ),
        "uplift": (
            "The median of per-pair ratios (each speculative run over the plain run beside "
            "it), not Spec tok/s over Plain tok/s: pairing cancels a busy machine's drift"
        ),
        "uplift_interval": (
            "95 % interval of the uplift (distribution-free, from order statistics); "
            "speculation pays off only when it lies above 1. Marked * when the setting's "
            "interval target was not met within its time budget"
        ),
        "pairs": "Interleaved plain/speculative run pairs measured; r = re-measured fresh",
    }

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.ToolTipRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.KEYS)
        ):
            return self.HEADER_TIPS.get(self.KEYS[section])
        return super().headerData(section, orientation, role)

    def row_total(self) -> int:
        return len(self.results)

    def set_results(self, results: list[SettingResult]) -> None:
        self.beginResetModel()
        self.results = list(results)
        self._rows = rows(self.results)
        self.best = best_result(self.results)
        self.endResetModel()

    def add(self, result: SettingResult) -> None:
        self.set_results([*self.results, result])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        key = self.KEYS[index.column()]
        row = self._rows[index.row()]
        value = row["uplift_low"] if key == "uplift_interval" else row[key]
        is_best = self.results[index.row()] is self.best
        if role == Qt.ItemDataRole.DisplayRole:
            if key == "uplift_interval":
                return format_interval(row)
            if key == "pairs":
                return f"{value}{' r' if row['remeasured'] else ''}"
        if role == SORT_ROLE:
            return value if value is not None else -1
        if role == Qt.ItemDataRole.BackgroundRole and is_best:
            return QBrush(QColor("#e8f5ec"))
        if role == Qt.ItemDataRole.FontRole and is_best:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "verify_agreement":
                return self.results[index.row()].summary.get("verify_note")
            if key in self.HEADER_TIPS:
                return self.HEADER_TIPS[key]
            return "Best setting" if is_best else None
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if value is None:
            return "—"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            if "tok_s" in key:
                return f"{value:,.1f}"
            return f"{value:.2f}x" if key == "uplift" else f"{value:.3f}"
        return str(value)


def format_interval(row: dict[str, Any]) -> str:
    """ "1.42-1.61x", with "*" when the interval target was not met in the budget."""
    low, high = row.get("uplift_low"), row.get("uplift_high")
    if low is None or high is None:
        return "—"
    unmet = "*" if row.get("interval_target_met") is False else ""
    return f"{low:.2f}-{high:.2f}x{unmet}"


class _Signals(QObject):
    result = Signal(object)
    progress = Signal(int, int)


class TunePage(QWidget):
    def __init__(self, selection: PairSelection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selection = selection
        self.run: TuneRun | None = None
        self._cancel = threading.Event()
        self._started = 0.0
        self._undo: Snapshot | None = None
        self._running = False
        self._signals = _Signals()
        self._signals.result.connect(self._on_result)
        self._signals.progress.connect(self._on_progress)

        title = QLabel("Tune")
        title.setObjectName("pageTitle")
        self.pair_label = QLabel()
        self.pair_label.setObjectName("pageHint")
        self.pair_label.setWordWrap(True)
        cores = physical_cores()
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
        self.start_button = QPushButton("Start")
        self.cancel_button = QPushButton("Cancel")
        self.force = QCheckBox("Measure anyway")
        self.force.setToolTip(
            "Sweep a pair that cannot gain on this MNN (two linear-attention models): "
            "the results are marked and never applied"
        )
        self.force.hide()
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setFormat("%p%")
        self.eta_label = QLabel()
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.apply_button = QPushButton("Apply Best")
        self.undo_button = QPushButton("Undo Apply")
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        self.past = QComboBox()
        self.open_button = QPushButton("Open")
        self.compare = QComboBox()

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
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(presets)
        left_layout.addLayout(form)
        left_layout.addWidget(QLabel("Prompts"))
        left_layout.addWidget(self.prompts, 1)

        self.model = ResultsModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.chart = pg.PlotWidget(
            title="Uplift by draft length (median of pairs; bars: 95 % interval)"
        )
        self.chart.setLabel("bottom", "draft length d")
        self.chart.setLabel("left", "uplift over plain decoding", units="x")
        self.chart.addLegend()
        self._add_parity_line()

        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.table)
        right.addWidget(self.chart)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 3)

        controls = QHBoxLayout()
        for widget in (
            self.start_button,
            self.force,
            self.cancel_button,
            self.progress,
            self.eta_label,
        ):
            controls.addWidget(widget)
        results_bar = QHBoxLayout()
        results_bar.addWidget(self.verdict, 1)
        results_bar.addWidget(self.apply_button)
        results_bar.addWidget(self.undo_button)
        past_bar = QHBoxLayout()
        past_bar.addWidget(QLabel("Past runs:"))
        past_bar.addWidget(self.past, 1)
        past_bar.addWidget(self.open_button)
        past_bar.addWidget(QLabel("Compare with:"))
        past_bar.addWidget(self.compare, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(self.pair_label)
        layout.addLayout(controls)
        layout.addLayout(results_bar)
        layout.addWidget(splitter, 1)
        layout.addLayout(past_bar)

        self.quick_button.clicked.connect(lambda: self.use_preset("quick"))
        self.thorough_button.clicked.connect(lambda: self.use_preset("thorough"))
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self._cancel.set)
        self.apply_button.clicked.connect(self.apply_best)
        self.undo_button.clicked.connect(self.undo_apply)
        self.open_button.clicked.connect(self.open_selected)
        self.compare.currentIndexChanged.connect(self._on_compare_changed)
        selection.changed.connect(self._on_pair_changed)
        self._on_pair_changed()
        self.refresh_past()

    @staticmethod
    def _spin(low: int, high: int, value: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setValue(min(max(value, low), high))
        return spin

    # -- plan ------------------------------------------------------------------------------

    def _on_pair_changed(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        if target is None or draft is None:
            self.pair_label.setText("Choose a target and a draft on the Pair page first.")
            self.start_button.setEnabled(False)
            return
        text = (
            f"Target {target.name} · draft {draft.name}. Settings not "
            "swept stay as the saved recipe has them."
        )
        # Known from the bundles alone; the engine's probe decides at Start.
        cannot_pay = assess_paths(target, draft).cannot_pay
        if cannot_pay:
            text += (
                " Both use linear attention: speculation cannot pay on MNN "
                f"{MEASURED_MNN}, so Start measures only if this MNN can roll their state "
                "back, or with Measure anyway."
            )
        self.pair_label.setText(text)
        self.force.setChecked(False)
        self.force.setVisible(cannot_pay)
        self.start_button.setEnabled(not self._running)
        self.use_preset("quick")

    def use_preset(self, kind: str) -> None:
        target, draft = self.selection.target, self.selection.draft
        if target is None or draft is None:
            return
        self.show_plan(plan_for(kind, recipe_defaults(target, draft)))

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

        prompts = tuple(p.strip() for p in self.prompts.toPlainText().split("\n\n") if p.strip())
        return SweepPlan(
            draft_lengths=span(self.d_min, self.d_max),
            draft_threads=span(self.dt_min, self.dt_max),
            draft_precisions=tuple(n for n, b in self.precisions.items() if b.isChecked()),
            draft_memories=tuple(n for n, b in self.memories.items() if b.isChecked()),
            target_threads=span(self.tt_min, self.tt_max),
            prompts=prompts or DEFAULT_PROMPTS,
            tokens=self.tokens.value(),
            repeats=self.repeats.value(),
            budget_seconds=float(self.budget.value()),
            min_run_seconds=self.min_run.value(),
        )

    # -- running ---------------------------------------------------------------------------

    def start(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        plan = self.current_plan()
        if target is None or draft is None or not plan.settings():
            show_error(
                self,
                "Nothing to measure",
                "Choose a pair and at least one precision and one memory mode.",
            )
            return
        self._cancel.clear()
        self.run = None
        self._undo = None
        self.model.set_results([])
        self._draw_chart()
        self.progress.setRange(0, len(plan.settings()) * plan.pairs_per_setting)
        self.progress.setValue(0)
        self._started = time.monotonic()
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        self.verdict.setText(f"Measuring {len(plan.settings())} settings…")
        signals, cancel = self._signals, self._cancel
        force = self.force.isChecked()
        self._running = True

        def emit(signal: Any, *args: Any) -> None:
            try:
                signal.emit(*args)
            except RuntimeError:  # the page is gone (window closed): the sweep is stopping
                cancel.set()

        def work() -> TuneRun:
            from app.engine.client.engine_client import EngineClient
            from app.engine.client.tune_runner import run_sweep

            with EngineClient() as client:
                return run_sweep(
                    client,
                    target,
                    draft,
                    plan,
                    cancel.is_set,
                    lambda r: emit(signals.result, r),
                    lambda done, total: emit(signals.progress, done, total),
                    force,
                )

        background.run(self, "sweep", work, self._on_finished, self._on_failed)

    def _on_result(self, result: SettingResult) -> None:
        self.model.add(result)
        self._draw_chart()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setValue(done)
        elapsed = time.monotonic() - self._started
        if done:
            left = elapsed / done * (total - done)
            self.eta_label.setText(
                f"{left:.0f} s left" if left < 120 else f"{left / 60:.0f} min left"
            )

    def _on_finished(self, run: TuneRun) -> None:
        self.run = run
        self._end()
        path = new_run_path(Path(run.draft))
        try:
            run.save(path)
        except (OSError, DraftDeckError) as exc:
            show_error(self, "Results not saved", str(exc))
        self.model.set_results(run.results)
        self._draw_chart()
        stopped = " (cancelled; partial results)" if run.cancelled else ""
        self.verdict.setText(run.verdict() + stopped)
        self._update_apply(run)
        self.refresh_past()

    def _on_failed(self, error: Exception) -> None:
        self._end()
        if isinstance(error, SpeculationCannotPay):
            # A refusal, not a failure: say why where the verdict goes, no dialog.
            self.verdict.setText(f"{error.message} Tick “Measure anyway” to measure it.")
            self.force.show()
            return
        self.verdict.setText(f"Stopped: {error}")
        show_error(self, "Tuning stopped", str(error))

    def shutdown(self) -> None:
        """Stop a running sweep (its engine worker closes when the sweep returns)."""
        self._cancel.set()

    def _end(self) -> None:
        self._running = False
        self.start_button.setEnabled(self.selection.target is not None)
        self.cancel_button.setEnabled(False)
        self.eta_label.setText("")

    # -- results ---------------------------------------------------------------------------

    def _curves(self, results: list[SettingResult]) -> dict[int, list[SettingResult]]:
        by_threads: dict[int, list[SettingResult]] = {}
        for result in results:
            by_threads.setdefault(result.setting.draft_threads, []).append(result)
        return by_threads

    def _add_parity_line(self) -> None:
        """Uplift 1: below it, speculation loses to plain decoding."""
        self.chart.addItem(
            pg.InfiniteLine(angle=0, pos=1.0, pen=pg.mkPen("#a1261b", style=Qt.PenStyle.DashLine))
        )

    def _draw_chart(self, other: TuneRun | None = None) -> None:
        self.chart.clear()
        self._add_parity_line()
        colours = ["#3b5bdb", "#1e6b34", "#8a5300", "#862e9c"]
        runs = [(self.model.results, "", Qt.PenStyle.SolidLine)]
        if other is not None:
            runs.append((other.results, " (compared run)", Qt.PenStyle.DashLine))
        for results, suffix, style in runs:
            for i, (threads, group) in enumerate(sorted(self._curves(results).items())):
                best_per_d: dict[int, SettingResult] = {}
                for r in group:
                    d = r.setting.draft_length
                    if d not in best_per_d or r.uplift > best_per_d[d].uplift:
                        best_per_d[d] = r
                xs = np.array(sorted(best_per_d), dtype=float)
                ys = np.array([best_per_d[int(x)].uplift for x in xs])
                intervals = [best_per_d[int(x)].interval for x in xs]
                low = ys - np.array([i.low for i in intervals])
                high = np.array([i.high for i in intervals]) - ys
                pen = pg.mkPen(colours[i % len(colours)], width=2, style=style)
                self.chart.plot(
                    xs,
                    ys,
                    pen=pen,
                    symbol="o",
                    symbolBrush=colours[i % 4],
                    name=f"draft {threads} thread(s){suffix}",
                )
                self.chart.addItem(
                    pg.ErrorBarItem(x=xs, y=ys, top=high, bottom=low, beam=0.15, pen=pen)
                )

    def apply_refusal(self, run: TuneRun) -> str | None:
        """Why Apply Best is off for this run (None: it may be applied)."""
        try:
            current = recipe_defaults(Path(run.target), Path(run.draft))
        except (OSError, DraftDeckError) as exc:
            return f"the pair's recipes cannot be read: {exc}"
        return apply_refusal(run, current)

    def _update_apply(self, run: TuneRun) -> None:
        refusal = self.apply_refusal(run)
        self.apply_button.setEnabled(refusal is None)
        self.apply_button.setToolTip(
            "Shows what it will change, then writes the best's swept keys"
            if refusal is None
            else f"Not applied: {refusal}."
        )
        if refusal is not None and run.results and run.cannot_pay is None:
            self.verdict.setText(f"{self.verdict.text()} Apply Best is off: {refusal}.")

    def apply_best(self) -> None:
        """Show the changes (key: old → new per file); on consent, write them."""
        best = best_result(self.model.results)
        if best is None or self.run is None:
            return
        run = self.run
        refusal = self.apply_refusal(run)
        if refusal is not None:
            self.verdict.setText(f"Not applied: {refusal}.")
            return
        # The pair the run measured, not whatever is selected now.
        target, draft = Path(run.target), Path(run.draft)
        fields = run.plan.swept_fields()
        changes = planned_changes(best.setting, target, draft, fields)
        if not changes:
            self.verdict.setText("Nothing to change: the recipes already have these values.")
            return
        listing = "\n".join(c.text() for c in changes)
        self.confirm_box = ask(
            self,
            "Apply Best",
            f"Apply {best.setting.label()}? These keys change:\n\n{listing}",
            "Apply",
            lambda: self._apply(best.setting, target, draft, fields),
        )

    def _apply(self, setting: Setting, target: Path, draft: Path, fields: tuple[str, ...]) -> None:
        try:
            self._undo = apply_setting(setting, target, draft, fields)
        except DraftDeckError as exc:
            show_error(self, "Could not apply", str(exc))
            return
        self.undo_button.setEnabled(True)
        self.verdict.setText(
            f"Applied {setting.label()} to the recipes; Chat and the phone push use it now."
        )

    def undo_apply(self) -> None:
        if self._undo is not None:
            restore(self._undo)
            self._undo = None
            self.undo_button.setEnabled(False)
            self.verdict.setText("The recipes are back as they were.")

    # -- past runs -------------------------------------------------------------------------

    def refresh_past(self) -> None:
        files = sorted(runs_dir().glob("*.json"), reverse=True) if runs_dir().is_dir() else []
        for combo in (self.past, self.compare):
            combo.blockSignals(True)
            combo.clear()
        self.compare.addItem("(nothing)", None)
        for path in files:
            self.past.addItem(path.stem, path)
            self.compare.addItem(path.stem, path)
        for combo in (self.past, self.compare):
            combo.blockSignals(False)
        self.open_button.setEnabled(bool(files))

    def open_run(self, path: Path) -> TuneRun:
        run = TuneRun.load(path)
        self.run = run
        self.model.set_results(run.results)
        self._draw_chart()
        self.verdict.setText(f"{path.stem}: {run.verdict()}")
        self._update_apply(run)
        return run

    def open_selected(self) -> None:
        path = self.past.currentData()
        if isinstance(path, Path):
            try:
                self.open_run(path)
            except DraftDeckError as exc:
                show_error(self, "Cannot open the run", str(exc))

    def _on_compare_changed(self) -> None:
        path = self.compare.currentData()
        other = None
        if isinstance(path, Path):
            try:
                other = TuneRun.load(path)
            except (DraftDeckError, KeyError, TypeError) as exc:
                show_error(self, "Cannot open the run", str(exc))
        self._draw_chart(other)
