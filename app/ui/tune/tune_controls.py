"""The Tune page's run controls: Start, Measure anyway, Cancel, the progress bar and the
time left, shown from a sweep's status snapshots (engine/client/tune_job.py)."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.core.measure.tune_eta import WIDEST_TIME_LEFT, time_left_text
from app.engine.client.tune_job import CANCELLING, TuneStatus

CANCEL = "Cancel"
# The bar counts per mille of the share shown: the share, not pairs of a plan that
# grows (which went back).
BAR_STEPS = 1000


class SweepControls(QWidget):
    """`start_keys`, `cancel_keys`: the buttons' keys, as their tooltips say them."""

    def __init__(self, start_keys: str, cancel_keys: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._start_keys = start_keys
        self.start_button = QPushButton("Start")
        self.cancel_button = QPushButton(CANCEL)
        self.cancel_button.setToolTip(
            f"Stop now, keeping the run pairs measured whole ({cancel_keys})"
        )
        # As wide as its longer text, so the row does not move when it says it.
        width = max(
            self.cancel_button.fontMetrics().horizontalAdvance(t) for t in (CANCEL, CANCELLING)
        )
        self.cancel_button.setMinimumWidth(
            width + 4 * self.cancel_button.fontMetrics().averageCharWidth()
        )
        self.cancel_button.setEnabled(False)
        self.force = QCheckBox("Measure anyway")
        self.force.setToolTip(
            "Sweep a pair that cannot gain on this MNN (two linear-attention models): "
            "the results are marked and never applied"
        )
        self.force.hide()
        self.progress = QProgressBar()
        self.progress.setFormat("%p%")
        self.progress.setRange(0, BAR_STEPS)
        # One line of a fixed width: a wrapping label squeezed beside the bar once took
        # three lines, and the taller row moved the whole form down when a run started.
        self.eta_label = QLabel()
        metrics = self.eta_label.fontMetrics()
        widest = max(metrics.horizontalAdvance(t) for t in WIDEST_TIME_LEFT)
        self.eta_label.setFixedWidth(widest + metrics.averageCharWidth())
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for widget in (
            self.start_button,
            self.force,
            self.cancel_button,
            self.progress,
            self.eta_label,
        ):
            row.addWidget(widget)

    def set_blocked(self, reason: str) -> None:
        """Why Start is off for a pair that cannot be tuned ("": it is not), in its tip."""
        self.start_button.setToolTip(
            f"This pair cannot be tuned: {reason}"
            if reason
            else f"Measure the plan's settings ({self._start_keys})"
        )

    def started(self) -> None:
        """A sweep was started: Cancel on, the bar from nothing."""
        self.start_button.setEnabled(False)
        self.cancel_button.setText(CANCEL)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)

    def show_status(self, status: TuneStatus) -> None:
        """The bar at the share shown (it never goes back) and the time left."""
        self.progress.setValue(max(self.progress.value(), round(status.fraction * BAR_STEPS)))
        if status.cancelling:
            self.cancelling()
        else:
            self.eta_label.setText(time_left_text(status.eta_seconds))

    def cancelling(self) -> None:
        """Said at once on the first click: the sweep is stopping (no second click)."""
        self.cancel_button.setText(CANCELLING)
        self.cancel_button.setEnabled(False)
        self.eta_label.setText("")

    def ended(self, can_start: bool) -> None:
        self.start_button.setEnabled(can_start)
        self.cancel_button.setText(CANCEL)
        self.cancel_button.setEnabled(False)
        self.eta_label.setText("")
