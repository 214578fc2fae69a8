"""The Downloads page's queue: one row per download, with pause, resume, cancel (for a
stopped download: discard, which deletes what arrived) and clear, each offered only when
the selected download allows it. Clear removes only rows that left nothing on disk: a
paused download is not finished."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTableView, QVBoxLayout, QWidget

from app.core.hub.downloads import Downloads
from app.core.hub.job import CANCELLED, DONE, FAILED, FINISHED, PAUSED, JobStatus
from app.ui.base.job_models import ProgressDelegate, offer
from app.ui.base.table_model import setup_table
from app.ui.downloads.download_models import QueueModel

NOTHING_SELECTED = "Select a download in the queue first"
CANCEL, DISCARD = "Cancel", "Discard"


class DownloadQueuePanel(QWidget):
    """Shows the service's downloads; `refresh()` re-reads them and returns the statuses
    that changed, for the page's reactions. After each action `acted` asks the page to
    refresh, so that no status change misses the page."""

    acted = Signal()

    def __init__(self, downloads: Downloads, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.downloads = downloads
        self.model = QueueModel()
        self.view = QTableView()
        self.view.setObjectName("downloadQueue")
        self.view.setModel(self.model)
        setup_table(self.view)
        self.view.setItemDelegateForColumn(
            QueueModel.COLUMNS.index("Progress"), ProgressDelegate(self.view)
        )
        self.pause_button = QPushButton("Pause")
        self.retry_button = QPushButton("Resume / Retry")
        self.cancel_button = QPushButton(DISCARD)
        # Its text changes with the selection: keep the wider one's width, no jumping.
        self.cancel_button.setMinimumWidth(self.cancel_button.sizeHint().width())
        self.cancel_button.setText(CANCEL)
        self.clear_button = QPushButton("Clear Finished")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        buttons = QHBoxLayout()
        for button in (self.pause_button, self.retry_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.clear_button)
        layout.addLayout(buttons)

        self.pause_button.clicked.connect(self._pause)
        self.retry_button.clicked.connect(self._resume)
        self.cancel_button.clicked.connect(self._cancel)
        self.clear_button.clicked.connect(self._clear)
        self.view.selectionModel().selectionChanged.connect(self.update_buttons)
        self.update_buttons()

    def refresh(self) -> list[JobStatus]:
        changed = self.model.sync(self.downloads.jobs())
        self.update_buttons()
        return changed

    def update_buttons(self) -> None:
        status = self.model.selected_status(self.view)
        state = status.state if status is not None else ""
        finished = state in FINISHED
        if status is None:
            pause = resume = cancel = NOTHING_SELECTED
        else:
            pause = f"This download is {state}" if finished else ""
            resume = "" if finished else "This download is still running"
            cancel = f"This download is {state}" if state in (DONE, CANCELLED) else ""
            if state == DONE:
                resume = "This download is done"
            elif state == CANCELLED:  # its files were deleted: nothing to resume
                resume = (
                    "This download was cancelled and its files deleted: Download starts it again"
                )
        offer(self.pause_button, pause, "Stop after the current chunk; Resume continues it")
        offer(self.retry_button, resume, "Download again, keeping the files already verified")
        stopped = state in (PAUSED, FAILED)
        self.cancel_button.setText(DISCARD if stopped else CANCEL)
        offer(
            self.cancel_button,
            cancel,
            "Delete the files that arrived and end this download"
            if stopped
            else "Stop and delete what arrived",
        )
        offer(
            self.clear_button,
            ""
            if self._clearable()
            else "No download is over (a paused one stays until resumed or discarded)",
            "Remove done and cancelled downloads from the list; paused ones stay until "
            "resumed or discarded",
        )

    def _clearable(self) -> bool:
        """Whether Clear would remove a row: one over, with nothing left on disk."""
        return any(
            self.model.status(row).state in FINISHED and not job.leaves_partial()
            for row, job in enumerate(self.model.jobs)
        )

    def _pause(self) -> None:
        job = self.model.selected_job(self.view)
        if job is not None:
            self.downloads.pause(job)
        self.acted.emit()

    def _resume(self) -> None:
        job = self.model.selected_job(self.view)
        if job is not None:
            self.downloads.resume(job)
        self.acted.emit()

    def _cancel(self) -> None:
        job = self.model.selected_job(self.view)
        if job is not None:
            self.downloads.cancel(job)
        self.acted.emit()

    def _clear(self) -> None:
        self.downloads.clear_finished()
        self.acted.emit()
