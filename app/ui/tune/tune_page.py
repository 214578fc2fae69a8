"""The Tune page: measure recipe settings for the selected pair and apply the best.

The sweep is a TuneJob that the window's TuneSweeps service (engine/client/tune_sweeps.py)
queues; the page renders the job's status snapshots as they change (background.watch)
and never hears from the sweep's thread. The form follows the pair's recipes as they are
saved, from anywhere (base/recipe_watch.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShowEvent
from PySide6.QtWidgets import QLabel, QMessageBox, QSplitter, QVBoxLayout, QWidget

from app.core.infra.errors import DraftDeckError, FileError
from app.core.measure.tune_apply import current_row
from app.core.measure.tune_plan import (
    SweepPlan,
    plan_for,
    recipe_defaults,
    sampling_text,
    thread_counts,
    verifies_exactly,
)
from app.core.measure.tune_run import TuneRun
from app.core.recipe.schema import physical_cores
from app.engine.client.tune_job import FAILED, FINISHED, MEASURING, REFUSED, TuneJob, TuneStatus
from app.engine.client.tune_sweeps import TuneSweeps
from app.ui.base import background
from app.ui.base.dialogs import show_error, show_file_error
from app.ui.base.labels import not_started_while, wrap_to_width
from app.ui.base.no_pair import NeedsPair
from app.ui.base.pair_selection import PairSelection
from app.ui.base.recipe_watch import RecipeWatch
from app.ui.base.verdict_label import VerdictLabel
from app.ui.tune import tune_phone
from app.ui.tune.tune_apply_bar import APPLY_KEYS, ApplyBar, button_key, keys_text
from app.ui.tune.tune_controls import SweepControls
from app.ui.tune.tune_pair_note import pair_note
from app.ui.tune.tune_past_runs import PastRuns
from app.ui.tune.tune_plan_form import PlanForm
from app.ui.tune.tune_results_view import ResultsView

# Tune's own keys (the window lists them under Help); Apply Best's is APPLY_KEYS.
START_KEYS = QKeySequence("Ctrl+Return")
CANCEL_KEYS = QKeySequence("Escape")


class TunePage(QWidget):
    def __init__(
        self,
        selection: PairSelection,
        sweeps: TuneSweeps,
        parent: QWidget | None = None,
        measuring_elsewhere: Callable[[], str] = str,  # what else measures ("": nothing)
    ) -> None:
        super().__init__(parent)
        self.selection = selection
        self._elsewhere = measuring_elsewhere
        self.run: TuneRun | None = None
        self.sweeps = sweeps
        self.queue = sweeps.queue
        self.job: TuneJob | None = None  # the sweep the page shows
        self._job_shown = True  # whether the job's end has been shown
        self._blocked = ""  # why the selected pair cannot be tuned at all
        self._current: dict[str, object] = {}  # the swept keys as they ran at Start
        self._phone_pair: tuple[Path, Path] | None = None  # whose forecast is asked

        title = QLabel("Tune")
        title.setObjectName("pageTitle")
        self.pair_label = QLabel()
        self.pair_label.setObjectName("pageHint")
        wrap_to_width(self.pair_label)
        self.blocked_label = QLabel()
        self.blocked_label.setObjectName("blocked")
        wrap_to_width(self.blocked_label)
        self.blocked_label.hide()
        self.form = PlanForm(physical_cores())
        self.controls = c = SweepControls(keys_text(START_KEYS), keys_text(CANCEL_KEYS))
        self.start_button, self.cancel_button, self.force = c.start_button, c.cancel_button, c.force
        self.progress, self.eta_label = c.progress, c.eta_label
        self.verdict = VerdictLabel()
        self.apply_bar = ApplyBar()
        self.apply_button, self.undo_button = (
            self.apply_bar.apply_button,
            self.apply_bar.undo_button,
        )
        self.history = PastRuns()
        self.past = self.history.past

        self.results = ResultsView()
        # Which sampler the shown figures were measured with (a reopened run's own), and
        # whether greedy output must equal plain output for this recipe.
        self.sampler_label = self.results.sampler_label
        self.model, self.proxy = self.results.model, self.results.proxy
        self.table, self.chart = self.results.table, self.results.chart
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.form)
        splitter.addWidget(self.results)
        splitter.setStretchFactor(1, 3)
        # The form needs little width; the table and chart get the rest.
        splitter.setSizes([self.form.minimumSizeHint().width(), 10_000])

        body = QWidget()  # without a pair, NeedsPair's notice instead of an idle form
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self.controls)
        body_layout.addWidget(self.verdict)
        body_layout.addWidget(self.apply_bar)
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
        self.form.sample.toggled.connect(self._show_planned_sampling)
        self.history.opened.connect(self._open_path)
        # Keys while the page has the focus; their tips are what Help's key list says.
        button_key(self, START_KEYS, "Start measuring the plan", self.start_button)
        button_key(
            self, CANCEL_KEYS, "Stop the sweep, keeping what was measured", self.cancel_button
        )
        button_key(
            self, APPLY_KEYS, "Apply the best setting (shows the changes first)", self.apply_button
        )
        self.history.compared.connect(self.results.compare)
        selection.changed.connect(self._on_pair_changed)
        # A recipe saved anywhere (a preset on the Recipes page, this computer's settings,
        # a command): the form's ranges follow it without Quick (Start measured the old).
        self.recipe_watch = RecipeWatch(selection, self)
        self.recipe_watch.changed.connect(self._recipes_changed)
        background.watch(self, self.queue, self._on_tune_changed)
        self._on_pair_changed()

    # -- plan ------------------------------------------------------------------------------

    def _on_pair_changed(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        if not self._running():
            # The last sweep's end ("Stopped: …") was about the pair before.
            self.verdict.clear()
            self.run = None
            self.results.show_results([], self.form.current_plan())
            self.apply_bar.show_idle()
            self._ask_phone(target, draft)
        self.form.read_recipe(target)
        if target is None or draft is None:
            self.pair_label.setText("")  # NeedsPair says what to do
            self._show_blocked("")
            self.start_button.setEnabled(False)
            return
        note = pair_note(target, draft)
        self._show_blocked(note.blocked)
        self.pair_label.setText(note.text)
        self.force.setChecked(False)
        self.force.setVisible(note.cannot_pay)
        self.start_button.setEnabled(not self._running() and not self._blocked)
        self.use_preset("quick")

    def showEvent(self, event: QShowEvent) -> None:
        self._recipes_changed()  # in case the watch missed one (a folder it cannot watch)
        super().showEvent(event)

    def _recipes_changed(self) -> None:
        """The recipes may have been saved since: the sampler, the thread counts, the
        form's values that measured the recipes as they ran, and whether a shown run's
        comparison still holds."""
        target, draft = self.selection.target, self.selection.draft
        self.form.read_recipe(target)
        if target is not None and draft is not None:
            # Unreadable now (a pack being deleted): the recipes say so where edited.
            with contextlib.suppress(OSError, DraftDeckError):
                self.form.show_threads(thread_counts(target, draft))
                self.form.follow_recipe(recipe_defaults(target, draft))
        if not self._running():
            self._show_planned_sampling()
            if self.run is not None:
                self._show_current(self.run)
                self.apply_bar.refresh()
                # Another phone may be chosen, or acceptance measured, since.
                self._ask_phone(Path(self.run.target), Path(self.run.draft))
            else:
                self._ask_phone(target, draft)

    def _ask_phone(self, target: Path | None, draft: Path | None) -> None:
        """Work out the forecast on the window's phone for the pair off the GUI thread
        (tune_phone.py); the phone column, its line and Apply Best follow it."""
        if target is None or draft is None:
            self.results.show_phone(None)
            return
        if self.results.model.phone is not None and self._phone_pair != (target, draft):
            self.results.show_phone(None)  # the pair before's, until this one's is known
        self._phone_pair = (target, draft)
        background.run(
            self,
            "phone",
            lambda: tune_phone.work_out(target, draft),
            lambda shown: self._show_phone((target, draft), shown),
        )

    def _show_phone(self, pair: tuple[Path, Path], shown: tune_phone.PhoneShown) -> None:
        if pair != self._phone_pair:
            return  # asked for a pair no longer shown
        self.results.show_phone(shown)
        self.apply_bar.set_phone(pair, shown)

    def _show_blocked(self, reason: str) -> None:
        """Say inline why Start is off for a pair that cannot work (no dialog at Start)."""
        self._blocked = reason
        self.blocked_label.setText(f"Start is off: this pair cannot be tuned. {reason}")
        self.blocked_label.setVisible(bool(reason))
        self.controls.set_blocked(reason)

    def use_preset(self, kind: str) -> None:
        target, draft = self.selection.target, self.selection.draft
        if target is None or draft is None:
            return
        recipe = recipe_defaults(target, draft)
        self.form.show_plan(plan_for(kind, recipe), recipe)
        self.form.show_threads(thread_counts(target, draft))
        self._show_planned_sampling()

    def _show_planned_sampling(self) -> None:
        """Before a run (none shown): the sampler Start would measure with, and whether
        greedy output must equal plain output for this target's recipe."""
        target = self.selection.target
        if self.run is not None or self._running() or target is None:
            return
        plan = self.form.current_plan()
        self._say_sampling(replace(plan, sample=True) if self.form.sampler() else plan, target)

    def _say_sampling(self, plan: SweepPlan, target: Path) -> None:
        sampler = self.form.sampler()
        described = sampler.describe() if sampler else None
        self.sampler_label.setText(sampling_text(plan, described, verifies_exactly(target)))

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
        if busy := self._elsewhere():
            self.verdict.setText(not_started_while(busy))
            return
        self.run = None
        self._current = recipe_defaults(target, draft)  # as the job's run will keep it
        self.results.show_results([], plan)
        self._say_sampling(plan, target)
        self._hold_heights(True)
        self.controls.started()
        self.apply_bar.show_running()
        self.job = self.sweeps.start(target, draft, plan, self.force.isChecked())
        self._job_shown = False
        self._show_progress(self.job.status())
        self.verdict.setText(self.job.status().message)

    def cancel(self) -> None:
        """Stop the sweep now, keeping the run pairs measured whole; said at once."""
        if self.job is not None and self._running():
            self.job.cancel()
            self._show_progress(self.job.status())  # "Cancelling…" now, not at the next watch

    def _on_tune_changed(self) -> None:
        job = self.job
        if job is None or self._job_shown:
            return
        status = job.status()
        if len(status.results) != self.model.row_total():
            results = list(status.results)
            self.results.show_results(results, job.plan, current_row(results, self._current))
        self._show_progress(status)
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

    def _show_progress(self, status: TuneStatus) -> None:
        self.controls.show_status(status)
        # The status line follows the sweep's stage ("measuring the leaders again").
        if status.state == MEASURING and status.message and status.message != self.verdict.text():
            self.verdict.setText(status.message)

    def _show_finished(self, run: TuneRun) -> None:
        try:
            self.sweeps.save(run)
        except (OSError, DraftDeckError) as exc:
            show_error(self, "Results not saved", str(exc))
        self._show_run(run)
        # In front: the first sentence is what the page shows.
        stopped = "Partial results (cancelled): " if run.cancelled else ""
        self.verdict.setText(stopped + run.verdict())
        self.apply_bar.show_run(run)
        self.refresh_past()

    def _show_run(self, run: TuneRun) -> None:
        self.run = run
        self._show_current(run)
        self.sampler_label.setText(run.sampler_text())
        self._ask_phone(Path(run.target), Path(run.draft))

    def _show_current(self, run: TuneRun) -> None:
        """The run's rows, the one measured as the recipes run now marked."""
        try:
            now = recipe_defaults(Path(run.target), Path(run.draft))
        except (OSError, DraftDeckError):
            now = {}  # the pair is gone or unreadable: Apply Best says so
        self.results.show_results(run.results, run.plan, current_row(run.results, now))

    def _end(self) -> None:
        self.controls.ended(self.selection.target is not None and not self._blocked)
        self._hold_heights(False)

    def _hold_heights(self, hold: bool) -> None:
        """While a run goes on, the texts above the form keep at least the height they
        had at Start ("Measuring…" is shorter than a two-line verdict), so the form does
        not move up under the pointer; afterwards each needs a line at least."""
        for label in (self.verdict.shown, self.apply_bar.note):
            line = label.fontMetrics().lineSpacing()
            label.setMinimumHeight(max(label.height(), line) if hold else line)

    # -- results ---------------------------------------------------------------------------

    def apply_refusal(self, run: TuneRun) -> str | None:
        """Why Apply Best is off for this run (None: it may be applied)."""
        return self.apply_bar.refusal(run)

    def apply_best(self) -> None:
        self.apply_bar.apply_best()

    @property
    def confirm_box(self) -> QMessageBox:
        """Apply Best's last question (none before one was asked)."""
        box = self.apply_bar.confirm_box
        if box is None:
            raise AttributeError("confirm_box: Apply Best has asked nothing yet")
        return box

    # -- past runs -------------------------------------------------------------------------

    def refresh_past(self) -> None:
        self.history.refresh()

    def open_run(self, path: Path) -> TuneRun:
        run = TuneRun.load(path)
        self._show_run(run)
        self.verdict.setText(f"{path.stem}: {run.verdict()}")
        self.apply_bar.show_run(run)
        return run

    def open_selected(self) -> None:
        self.history.open_selected()

    def _open_path(self, path: Path) -> None:
        try:
            self.open_run(path)
        except FileError as exc:
            show_file_error(self, "Cannot open the run", exc)
