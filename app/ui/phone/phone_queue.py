"""The Phone page's push queue: one row per push, with cancel, push again and clear."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTableView, QVBoxLayout, QWidget

from app.core.phone.desk import PhoneDesk
from app.core.phone.push import FINISHED, PushStatus
from app.ui.base.job_models import ProgressDelegate, offer
from app.ui.base.table_model import setup_table
from app.ui.phone.phone_models import PushQueueModel


class PushQueuePanel(QWidget):
    """Shows the desk's pushes; `refresh()` re-reads them (the page calls it when the
    queue changes) and returns the statuses that changed, for the page's reactions."""

    def __init__(self, desk: PhoneDesk, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desk = desk
        self.model = PushQueueModel()
        self.view = QTableView()
        self.view.setObjectName("pushQueue")
        self.view.setModel(self.model)
        self.view.setItemDelegateForColumn(
            PushQueueModel.COLUMNS.index("Progress"), ProgressDelegate(self.view)
        )
        setup_table(self.view)
        self.view.setMinimumHeight(110)
        self.cancel_button = QPushButton("Cancel")
        self.retry_button = QPushButton("Push Again")
        self.clear_button = QPushButton("Clear Finished")

        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Push queue"))
        buttons.addStretch(1)
        for button in (self.cancel_button, self.retry_button, self.clear_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.view)

        # No refresh here: every action changes the queue, whose watcher refreshes.
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.retry_button.clicked.connect(self.retry_selected)
        self.clear_button.clicked.connect(self.desk.clear_finished)
        self.view.selectionModel().selectionChanged.connect(self.update_buttons)
        self.update_buttons()

    def refresh(self) -> list[PushStatus]:
        changed = self.model.sync(self.desk.queue.jobs)
        self.update_buttons()
        return changed

    def update_buttons(self) -> None:
        status = self.model.selected_status(self.view)
        finished = status is not None and status.state in FINISHED
        if status is None:
            cancel = again = "Select a push in the queue first"
        else:
            cancel = f"This push is {status.state}" if finished else ""
            again = "" if finished else "This push is still running"
        offer(self.cancel_button, cancel, "Stop this push; verified files stay on the phone")
        offer(self.retry_button, again, "Resume: files already verified on the phone are skipped")
        rows = range(self.model.rowCount())
        offer(
            self.clear_button,
            ""
            if any(self.model.status(r).state in FINISHED for r in rows)
            else "No push has finished",
            "Remove finished pushes from the list",
        )

    def cancel_selected(self) -> None:
        job = self.model.selected_job(self.view)
        if job is not None:
            job.cancel()

    def retry_selected(self) -> None:
        job = self.model.selected_job(self.view)
        if job is not None:
            self.desk.retry(job)  # resumes: verified files are skipped
