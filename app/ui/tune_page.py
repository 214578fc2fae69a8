"""The Tune page: measure recipe settings for the selected pair and apply the best.

The sweep is a TuneJob on the page's "tune" queue; the page renders the job's status
snapshots as they change (background.watch) and never hears from the sweep's thread.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import DraftDeckError, FileError
from app.core.measure.tune_apply import (
    BestChanges,
    Snapshot,
    best_changes,
    refusal_now,
    restore,
)
from app.core.measure.tune_plan import plan_for, recipe_defaults, sampling_text
from app.core.measure.tune_run import TuneRun, new_run_path
from app.core.pack.compat import assess_paths
from app.core.pack.verdict import MEASURED_MNN
from app.core.recipe.schema import physical_cores
from app.engine.client.tune_job import FAILED, FINISHED, REFUSED, TuneJob, tune_queue
from app.ui import background
from app.ui.dialogs import ask, show_error, show_file_error
from app.ui.labels import wrap_to_width
from app.ui.no_pair import NeedsPair
from app.ui.pair_selection import PairSelection
from app.ui.tune_past_runs import PastRuns
from app.ui.tune_plan_form import PlanForm
from app.ui.tune_results_view import ResultsView
from app.ui.tune_verdict import VerdictLabel


class TunePage(QWidget):
    def __init__(self, selection: PairSelection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selection = selection
        self.run: TuneRun | None = None
        self.queue = tune_queue()
        self.job: TuneJob | None = None
        self._job_shown = True  # whether the job's end has been shown
        self._undo: Snapshot | None = None
        self._blocked = ""  # why the selected pair cannot be tuned at all

        title = QLabel("Tune")
        title.setObjectName("pageTitle")
        self.pair_label = QLabel()
        self.pair_label.setObjectName("pageHint")
        wrap_to_width(self.pair_label)
        self.blocked_label = QLabel()
        self.blocked_label.setStyleSheet("color: #a1261b")
        wrap_to_width(self.blocked_label)
        self.blocked_label.hide()
        self.form = PlanForm(physical_cores())
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
        self.eta_label = wrap_to_width(QLabel())
        self.verdict = VerdictLabel()
        # Which sampler the shown figures were measured with (a reopened run's own).
        self.sampler_label = wrap_to_width(QLabel())
        self.sampler_label.setObjectName("pageHint")
        self.apply_button = QPushButton("Apply Best")
        self.undo_button = QPushButton("Undo Apply")
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        self.history = PastRuns()
        self.past = self.history.past

        self.results = ResultsView()
        self.model, self.proxy = self.results.model, self.results.proxy
        self.table, self.chart = self.results.table, self.results.chart
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.form)
        splitter.addWidget(self.results)
        splitter.setStretchFactor(1, 3)
        # The form needs little width; the table and chart get the rest.
        splitter.setSizes([self.form.minimumSizeHint().width(), 10_000])

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
        body = QWidget()  # without a pair, NeedsPair's notice instead of an idle form
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addLayout(controls)
        body_layout.addLayout(results_bar)
        body_layout.addWidget(self.sampler_label)
        body_layout.addWidget(splitter, 1)
        # Inside the body: without a pair, an opened run would load into hidden views.
        body_layout.addWidget(self.history)
        self.needs_pair = NeedsPair(selection, body, "to measure its settings")
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(self.pair_label)
        layout.addWidget(self.blocked_label)
        layout.addWidget(self.needs_pair, 1)

        self.form.quick_button.clicked.connect(lambda: self.use_preset("quick"))
        self.form.thorough_button.clicked.connect(lambda: self.use_preset("thorough"))
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.apply_button.clicked.connect(self.apply_best)
        self.undo_button.clicked.connect(self.undo_apply)
        self.history.opened.connect(self._open_path)
        self.history.compared.connect(self.results.compare)
        selection.changed.connect(self._on_pair_changed)
        background.watch(self, self.queue, self._on_tune_changed)
        self._on_pair_changed()

    # -- plan ------------------------------------------------------------------------------

    def _on_pair_changed(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        if not self._running():
            # The last sweep's end ("Stopped: …") was about the pair before.
            self.verdict.clear()
            self.sampler_label.clear()
        self.form.read_recipe(target)
        if target is None or draft is None:
            self.pair_label.setText("")  # NeedsPair says what to do
            self._show_blocked("")
            self.start_button.setEnabled(False)
            return
        text = (
            f"Target {target.name} · draft {draft.name}. Settings not "
            "swept stay as the saved recipe has them."
        )
        # Known from the bundles alone; the engine's probe decides at Start.
        verdict = assess_paths(target, draft)
        cannot_pay = verdict.cannot_pay
        self._show_blocked(verdict.summary() if verdict.blocked else "")
        if cannot_pay:
            text += (
                " Both use linear attention: speculation cannot pay on MNN "
                f"{MEASURED_MNN}, so Start measures only if this MNN can roll their state "
                "back, or with Measure anyway."
            )
        self.pair_label.setText(text)
        self.force.setChecked(False)
        self.force.setVisible(cannot_pay)
        self.start_button.setEnabled(not self._running() and not self._blocked)
        self.use_preset("quick")

    def showEvent(self, event: QShowEvent) -> None:
        # The recipe's sampler may have been edited on the Recipes page meanwhile.
        self.form.read_recipe(self.selection.target)
        super().showEvent(event)

    def _show_blocked(self, reason: str) -> None:
        """Say inline why Start is off for a pair that cannot work (no dialog at Start)."""
        self._blocked = reason
        self.blocked_label.setText(f"Start is off: this pair cannot be tuned. {reason}")
        self.blocked_label.setVisible(bool(reason))
        self.start_button.setToolTip(
            f"This pair cannot be tuned: {reason}" if reason else "Measure the plan's settings"
        )

    def use_preset(self, kind: str) -> None:
        target, draft = self.selection.target, self.selection.draft
        if target is None or draft is None:
            return
        self.form.show_plan(plan_for(kind, recipe_defaults(target, draft)))

    # -- running ---------------------------------------------------------------------------

    def _running(self) -> bool:
        return self.job is not None and not self.job.is_finished()

    def start(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        # The engine reads the recipe on disk: plan with that sampler, not a stale one.
        self.form.read_recipe(target)
        try:
            plan = self.form.measured_plan()
        except ValueError as exc:
            self.verdict.setText(f"Not started: {exc}.")  # the form marks the field too
            return
        if target is None or draft is None or not plan.settings():
            show_error(
                self,
                "Nothing to measure",
                "Choose a pair and at least one precision and one memory mode.",
            )
            return
        if self._running():
            return
        self.run = None
        self._undo = None
        self.results.show_results([], plan)
        sampler = self.form.sampler()
        described = sampler.describe() if sampler else None
        self.sampler_label.setText(sampling_text(plan, described))
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.apply_button.setEnabled(False)
        self.undo_button.setEnabled(False)
        self.queue.forget(list(self.queue.jobs))  # only finished ones: one sweep at a time
        self.job = TuneJob(target, draft, plan, self.force.isChecked())
        self._job_shown = False
        self._show_progress()
        self.verdict.setText(self.job.status().message)
        self.queue.submit(self.job)

    def cancel(self) -> None:
        """Stop the sweep after the current run pair, keeping what was measured."""
        if self.job is not None:
            self.job.cancel()

    def _on_tune_changed(self) -> None:
        job = self.job
        if job is None or self._job_shown:
            return
        status = job.status()
        if len(status.results) != self.model.row_total():
            self.results.show_results(list(status.results), job.plan)
        self._show_progress()
        # The same snapshot decides: the job may finish between two reads of its status.
        if status.state in FINISHED:
            self._job_shown = True
            self._end()
            if status.run is not None:
                self._show_finished(status.run)
            elif status.state == REFUSED:
                # A refusal, not a failure: say why where the verdict goes, no dialog.
                self.verdict.setText(f"{status.error} Tick “Measure anyway” to measure it.")
                self.force.show()
            elif status.state == FAILED:
                self.verdict.setText(f"Stopped: {status.error}")
                show_error(self, "Tuning stopped", status.error)

    def _show_progress(self) -> None:
        if self.job is None:
            return
        status = self.job.status()
        self.progress.setRange(0, status.pairs_total)
        self.progress.setValue(status.pairs_done)
        left = status.eta_seconds
        if left is not None:
            self.eta_label.setText(
                f"{left:.0f} s left" if left < 120 else f"{left / 60:.0f} min left"
            )

    def _show_finished(self, run: TuneRun) -> None:
        try:
            run.save(new_run_path(Path(run.draft)))
        except (OSError, DraftDeckError) as exc:
            show_error(self, "Results not saved", str(exc))
        self._show_run(run)
        # In front: the first sentence is what the page shows.
        stopped = "Partial results (cancelled): " if run.cancelled else ""
        self.verdict.setText(stopped + run.verdict())
        self._update_apply(run)
        self.refresh_past()

    def _show_run(self, run: TuneRun) -> None:
        self.run = run
        self.results.show_results(run.results, run.plan)
        self.sampler_label.setText(run.sampler_text())

    def shutdown(self) -> None:
        """Stop a running sweep (its engine worker closes when the sweep returns); wait
        for it only briefly: never freeze the closing window."""
        self.queue.shutdown(timeout=2.0)

    def _end(self) -> None:
        self.start_button.setEnabled(self.selection.target is not None and not self._blocked)
        self.cancel_button.setEnabled(False)
        self.eta_label.setText("")

    # -- results ---------------------------------------------------------------------------

    def apply_refusal(self, run: TuneRun) -> str | None:
        """Why Apply Best is off for this run (None: it may be applied)."""
        return refusal_now(run)

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
        run = self.run
        if run is None or not run.results:
            return
        refusal = self.apply_refusal(run)
        if refusal is not None:
            self.verdict.setText(f"Not applied: {refusal}.")
            return
        best = best_changes(run)
        if best is None:
            return
        if not best.changes:
            self.verdict.setText("Nothing to change: the recipes already have these values.")
            return
        listing = "\n".join(c.text() for c in best.changes)
        self.confirm_box = ask(
            self,
            "Apply Best",
            f"Apply {best.setting.label()}? These keys change:\n\n{listing}",
            "Apply",
            lambda: self._apply(best),
        )

    def _apply(self, best: BestChanges) -> None:
        try:
            self._undo = best.apply()
        except DraftDeckError as exc:
            show_error(self, "Could not apply", str(exc))
            return
        self.undo_button.setEnabled(True)
        self.verdict.setText(
            f"Applied {best.setting.label()} to the recipes; Chat and the phone push use it now."
        )

    def undo_apply(self) -> None:
        if self._undo is not None:
            restore(self._undo)
            self._undo = None
            self.undo_button.setEnabled(False)
            self.verdict.setText("The recipes are back as they were.")

    # -- past runs -------------------------------------------------------------------------

    def refresh_past(self) -> None:
        self.history.refresh()

    def open_run(self, path: Path) -> TuneRun:
        run = TuneRun.load(path)
        self._show_run(run)
        self.verdict.setText(f"{path.stem}: {run.verdict()}")
        self._update_apply(run)
        return run

    def open_selected(self) -> None:
        self.history.open_selected()

    def _open_path(self, path: Path) -> None:
        try:
            self.open_run(path)
        except FileError as exc:
            show_file_error(self, "Cannot open the run", exc)
