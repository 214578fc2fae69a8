"""The Downloads page: a view of the Downloads service (app/core/hub/downloads.py):
the catalog, a repo's file plan (download_details.py), and the download queue, which
lists the downloads an earlier run left unfinished. Quitting with downloads under way
asks first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.hub.catalog import CatalogEntry
from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HubUnreachable
from app.core.hub.job import (
    CANCELLED,
    DONE,
    FAILED,
    PAUSED,
    DownloadJob,
    DownloadState,
    JobStatus,
)
from app.core.infra.errors import HubError
from app.ui.base import background
from app.ui.base.dialogs import ask, show_error
from app.ui.base.fitted_table import CELLS, FittedTable
from app.ui.base.labels import wrap_to_width
from app.ui.base.table_model import setup_table
from app.ui.downloads.download_details import RepoDetails
from app.ui.downloads.download_models import ENTRY_ROLE, CatalogFilter, CatalogModel
from app.ui.downloads.download_queue import DownloadQueuePanel


class DownloadsPage(QWidget):
    installed = Signal(str)  # a pack folder that was just installed
    message = Signal(str)
    problem = Signal(str)  # something failed: said longer than a message

    def __init__(self, downloads: Downloads, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.downloads = downloads  # built once by the window (the CLI uses the same service)
        # Downloads a quit (or a crash) interrupted: listed paused, with Resume and Discard.
        self.restored = self.downloads.restore_interrupted()
        self._checked_updates = False
        self._told_restored = False
        self._quit_agreed = False
        self._states: list[
            tuple[int, DownloadState]
        ] = []  # (job, state) as last marked in the catalog

        title = QLabel("Downloads")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Draft packs and targets on the Hugging Face Hub. Files are verified "
            "before a pack is installed; interrupted downloads resume."
        )
        hint.setObjectName("pageHint")
        wrap_to_width(hint)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search repos")
        self.search.setClearButtonEnabled(True)
        self.role_filter = QComboBox()
        # Installed packs by their reading (the Library's roles), others by the catalog.
        self.role_filter.addItems(["All roles", "draft", "target", "either", "unknown"])
        self.family_filter = QComboBox()
        self.family_filter.addItems(["All families", "qwen3", "qwen3_5", "unknown"])
        self.refresh_button = QPushButton("Refresh from Hub")
        self.age_label = QLabel()
        self.age_label.setObjectName("pageHint")
        wrap_to_width(self.age_label)  # an offline sentence must not widen the window
        self.add_edit = QLineEdit()
        self.add_edit.setPlaceholderText("owner/repo to add")
        self.add_button = QPushButton("Add Repo")

        self.catalog_model = CatalogModel()
        self.catalog_proxy = CatalogFilter(self)
        self.catalog_proxy.setSourceModel(self.catalog_model)
        # At 1024 px the names give way (elided, whole in the tooltip) before Installed is
        # cut or the list scrolls sideways.
        columns = CatalogModel.COLUMNS
        self.catalog_view = FittedTable(
            ((columns.index("Repository"), 180), (columns.index("Listed by"), CELLS))
        )
        setup_table(self.catalog_view)
        # The fitted table sizes the columns itself (sized-to-contents ones cannot shrink).
        self.catalog_view.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Interactive
        )
        self.catalog_view.setModel(self.catalog_proxy)
        self.catalog_view.setSortingEnabled(True)
        self.catalog_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)

        self.repo_details = RepoDetails(self.downloads)
        # The pane's parts, as the page's (tests and screenshots reach them here).
        self.details, self.include_all = self.repo_details.details, self.repo_details.include_all
        self.files_model, self.files_view = (
            self.repo_details.files_model,
            self.repo_details.files_view,
        )
        self.download_button = self.repo_details.download_button
        self.verify_button = self.repo_details.verify_button
        self.remove_button = self.repo_details.remove_button

        self.queue = DownloadQueuePanel(self.downloads)
        # The panel's parts, as the page's (tests and screenshots reach them here).
        self.queue_model, self.queue_view = self.queue.model, self.queue.view
        self.pause_button, self.retry_button = self.queue.pause_button, self.queue.retry_button
        self.cancel_button, self.clear_button = self.queue.cancel_button, self.queue.clear_button

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.catalog_view)
        top.addWidget(self.repo_details)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        main = QSplitter(Qt.Orientation.Vertical)
        main.addWidget(top)
        main.addWidget(self.queue)
        main.setStretchFactor(0, 3)
        main.setStretchFactor(1, 2)

        filters = QHBoxLayout()
        for widget in (self.search, self.role_filter, self.family_filter):
            filters.addWidget(widget)
        filters.addStretch(1)
        adding = QHBoxLayout()
        adding.addWidget(self.refresh_button)
        adding.addWidget(self.age_label, 1)
        adding.addWidget(self.add_edit)
        adding.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addLayout(filters)
        layout.addLayout(adding)
        layout.addWidget(main, 1)

        self.search.textChanged.connect(self._apply_filters)
        self.role_filter.currentIndexChanged.connect(self._apply_filters)
        self.family_filter.currentIndexChanged.connect(self._apply_filters)
        self.refresh_button.clicked.connect(self.refresh_from_hub)
        self.add_button.clicked.connect(self.add_repo)
        self.add_edit.returnPressed.connect(self.add_repo)
        self.catalog_view.selectionModel().selectionChanged.connect(self._on_selection)
        self.repo_details.download.connect(self._on_download_asked)
        self.repo_details.removed.connect(self._on_repo_removed)
        self.repo_details.message.connect(self.message)
        self.queue.acted.connect(self._refresh)
        background.watch(self, self.downloads.queue, self._refresh)
        self.reload_catalog()
        self._refresh()  # the restored rows, without a "Paused" message each (showEvent tells)

    # -- catalog ----------------------------------------------------------------------------

    def reload_catalog(self) -> None:
        catalog = self.downloads.catalog()
        self.catalog_model.set_entries(list(catalog.entries))
        age = catalog.age_seconds()
        self.age_label.setText(
            "Hub listing: never fetched" if age is None else f"Hub listing: {_age(age)} old"
        )
        self.age_label.setToolTip("")
        self._mark_installed()
        if self.selected_entry() is None:  # a reset model drops the selection silently
            self.repo_details.show_entry(None)

    def refresh_from_hub(self) -> None:
        self.refresh_button.setEnabled(False)
        self.age_label.setText("Hub listing: refreshing…")
        background.run(
            self,
            "refresh",
            self.downloads.refresh_catalog,
            self._on_refreshed,
            self._on_refresh_failed,
        )

    def _on_refreshed(self, _catalog: object) -> None:
        self.refresh_button.setEnabled(True)
        self.reload_catalog()
        self.message.emit("Catalog refreshed from the Hub")

    def _on_refresh_failed(self, error: Exception) -> None:
        self.refresh_button.setEnabled(True)
        self.reload_catalog()
        saved = self.downloads.catalog().live_fetched_at
        shown = (
            f"showing the catalog saved on {_date(saved)}"
            if saved
            else "showing the repositories that ship with DraftDeck"
        )
        if isinstance(error, HubUnreachable):
            text = f"No connection to {error.where}: check the network; {shown}"
            self.age_label.setToolTip(f"The network said: {error.reason}")
        else:
            text = f"Could not refresh the catalog ({error}); {shown}"
            self.age_label.setToolTip("")
        self.age_label.setText(text)
        self.problem.emit(text)

    def add_repo(self) -> None:
        repo = self.add_edit.text().strip()
        try:
            self.downloads.add_repo(repo)
        except HubError as exc:
            show_error(self, "Not a repository id", str(exc))
            return
        self.add_edit.clear()
        self.reload_catalog()
        self.select_repo(repo)

    def select_repo(self, repo: str) -> None:
        for row in range(self.catalog_proxy.rowCount()):
            index = self.catalog_proxy.index(row, 0)
            entry = index.data(ENTRY_ROLE)
            if isinstance(entry, CatalogEntry) and entry.repo_id == repo:
                self.catalog_view.selectRow(row)
                return

    def _apply_filters(self) -> None:
        self.catalog_proxy.configure(
            self.search.text(),
            "" if self.role_filter.currentIndex() == 0 else self.role_filter.currentText(),
            "" if self.family_filter.currentIndex() == 0 else self.family_filter.currentText(),
        )

    def _on_repo_removed(self, _repo: str) -> None:
        self.reload_catalog()

    def _mark_installed(self) -> None:
        self.catalog_model.set_installed(self.downloads.marks())
        # Role and family of what is installed, read as the Library reads the packs.
        background.run(
            self, "readings", self.downloads.installed_readings, self.catalog_model.set_readings
        )

    def check_updates(self) -> None:
        background.run(
            self, "updates", self.downloads.check_updates, lambda _repos: self._mark_installed()
        )

    # -- plan and download ------------------------------------------------------------------

    def selected_entry(self) -> CatalogEntry | None:
        rows = self.catalog_view.selectionModel().selectedRows()
        entry = rows[0].data(ENTRY_ROLE) if rows else None
        return entry if isinstance(entry, CatalogEntry) else None

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        self.repo_details.show_entry(self.selected_entry())

    def download_selected(self) -> None:
        """What the pane's Download (or Re-download, Update) button does."""
        self.download_button.click()

    def _on_download_asked(self, repo: str, force: bool) -> None:
        self.start_download(repo, force)

    def start_download(self, repo: str, force: bool = False) -> DownloadJob:
        """Start (or show the one under way); `force` fetches again an intact pack."""
        job = self.downloads.start(repo, include_all=self.include_all.isChecked(), force=force)
        if job not in self.queue_model.jobs:  # not the download already under way
            self.message.emit(f"Downloading {repo}")
        self._refresh()
        self.queue_model.follow(self.queue_view, job)
        return job

    def _refresh(self) -> None:
        for status in self.queue.refresh():
            self._on_status(status)
        # A download started, stopped or ended: the catalog's marks and the pane follow.
        states = [(id(job), job.status().state) for job in self.downloads.jobs()]
        if states != self._states:
            self._states = states
            self._mark_installed()
            self.repo_details.follow_queue()
            entry = self.selected_entry()
            if entry is not None and entry.repo_id in self._settled(states):
                self.repo_details.refresh()

    def _settled(self, states: list[tuple[int, DownloadState]]) -> set[str]:
        """Repos whose download just ended (done or cancelled)."""
        ended = {job_id for job_id, state in states if state in (DONE, CANCELLED)}
        return {job.repo_id for job in self.downloads.jobs() if id(job) in ended}

    def _on_status(self, status: JobStatus) -> None:
        if status.state == DONE and status.up_to_date:
            self.message.emit(
                f"{status.repo_id} is already installed and up to date in {status.path}; "
                "nothing was fetched"
            )
        elif status.state == DONE:
            notes = "".join(f"; {note}" for note in status.notes)
            self.message.emit(f"Installed {status.repo_id} in {status.path}{notes}")
            self.installed.emit(status.path)
        elif status.state == FAILED:
            self.problem.emit(f"Download of {status.repo_id} failed: {status.error}")
        elif status.state == PAUSED:
            self.message.emit(f"Paused {status.repo_id}; Resume continues it")
        elif status.state == CANCELLED:
            self.message.emit(f"Cancelled {status.repo_id}; the files that arrived were deleted")

    def may_quit(self, quit_now: Callable[[], object]) -> bool:
        """Whether the window may close now; with downloads under way, asks first and
        calls `quit_now` if the user agrees (they pause, and come back paused)."""
        running = self.downloads.running()
        if not running or self._quit_agreed:
            return True
        # The figures the queue shows, read at the same moment (a fresh read of the job
        # said 24 % beside a row still showing 26 %).
        self._refresh()
        model = self.queue_model
        shown = {id(job): model.status(row) for row, job in enumerate(model.jobs)}

        def fraction(job: DownloadJob) -> float:
            status = shown.get(id(job))
            return (status if status is not None else job.status()).fraction

        names = ", ".join(f"{job.repo_id} ({fraction(job):.0%})" for job in running[:3]) + (
            f" and {len(running) - 3} more" if len(running) > 3 else ""
        )
        one = len(running) == 1
        count = "1 download is" if one else f"{len(running)} downloads are"
        ask(
            self,
            "Downloads under way",
            f"{count} under way: {names}.\n\nPause {'it' if one else 'them'} and quit? "
            f"{'It stays' if one else 'They stay'} in Downloads, paused, for the next start: "
            "Resume goes on from what arrived.",
            "Pause and Quit",
            lambda: self._agree_to_quit(quit_now),
        )
        return False

    def _agree_to_quit(self, quit_now: Callable[[], object]) -> None:
        self._quit_agreed = True
        quit_now()

    def showEvent(self, event: QShowEvent) -> None:
        if not self._checked_updates:
            self._checked_updates = True
            self.check_updates()
        if self.restored and not self._told_restored:
            self._told_restored = True
            count = "1 download" if len(self.restored) == 1 else f"{len(self.restored)} downloads"
            self.message.emit(
                f"{count} did not finish last time: paused in the queue (Resume or Discard)"
            )
        super().showEvent(event)


def _date(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp)
    return f"{moment.day} {moment:%B %Y, %H:%M}"


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"
