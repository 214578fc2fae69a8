"""The Downloads page: a view of the Downloads service (app/core/hub/downloads.py):
the catalog, a repo's file plan, and the download queue."""

from __future__ import annotations

from datetime import datetime
from html import escape

from PySide6.QtCore import QItemSelection, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.hub.catalog import CatalogEntry
from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HubUnreachable
from app.core.hub.job import CANCELLED, DONE, FAILED, PAUSED, DownloadJob, JobStatus
from app.core.hub.plan import SKIPPED_KINDS, RepoPlan
from app.core.infra.errors import HubError
from app.core.infra.units import format_bytes
from app.core.pack.library import Library
from app.ui import background
from app.ui.dialogs import show_error
from app.ui.download_models import ENTRY_ROLE, CatalogModel
from app.ui.download_queue import DownloadQueuePanel
from app.ui.fitted_table import CELLS, FittedTable
from app.ui.job_models import offer
from app.ui.labels import wrap_to_width
from app.ui.table_model import setup_table

NOTHING_CHOSEN = "Select a repository in the list first"
NOTHING_SHOWN = "Select a repository to see its files and sizes."


class DownloadsPage(QWidget):
    installed = Signal(str)  # a pack folder that was just installed
    message = Signal(str)
    problem = Signal(str)  # something failed: said longer than a message

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.downloads = Downloads(library)
        self._checked_updates = False

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
        self.role_filter.addItems(["All roles", "draft", "target", "unknown"])
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
        self.catalog_proxy = _CatalogFilter(self)
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

        self.details = QTextBrowser()
        self.details.setObjectName("details")
        self.details.setPlaceholderText(NOTHING_SHOWN)
        self.include_all = QCheckBox("Also fetch export files (ONNX, llm.mnn.json)")
        self.include_all.setToolTip(
            f"Files no runtime reads ({SKIPPED_KINDS}); the file list shows what is skipped"
        )
        self.download_button = QPushButton("Download")
        details_box = QWidget()
        details_layout = QVBoxLayout(details_box)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.details, 1)
        row = QHBoxLayout()
        row.addWidget(self.include_all)
        row.addStretch(1)
        row.addWidget(self.download_button)
        details_layout.addLayout(row)

        self.queue = DownloadQueuePanel(self.downloads)
        # The panel's parts, as the page's (tests and screenshots reach them here).
        self.queue_model, self.queue_view = self.queue.model, self.queue.view
        self.pause_button, self.retry_button = self.queue.pause_button, self.queue.retry_button
        self.cancel_button, self.clear_button = self.queue.cancel_button, self.queue.clear_button

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.catalog_view)
        top.addWidget(details_box)
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
        # The file list shown is the one Download fetches: list it again for the new choice.
        self.include_all.toggled.connect(self._on_include_all_toggled)
        self.download_button.clicked.connect(self.download_selected)
        self.queue.acted.connect(self._refresh)
        background.watch(self, self.downloads.queue, self._refresh)
        self.reload_catalog()

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
            self.details.clear()
            self._offer_download(NOTHING_CHOSEN)

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

    def _mark_installed(self) -> None:
        self.catalog_model.set_installed(self.downloads.marks())

    def check_updates(self) -> None:
        background.run(
            self, "updates", self.downloads.check_updates, lambda _repos: self._mark_installed()
        )

    # -- plan and download ------------------------------------------------------------------

    def selected_entry(self) -> CatalogEntry | None:
        rows = self.catalog_view.selectionModel().selectedRows()
        entry = rows[0].data(ENTRY_ROLE) if rows else None
        return entry if isinstance(entry, CatalogEntry) else None

    def _on_include_all_toggled(self, _checked: bool) -> None:
        self._show_selected()

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        entry = self.selected_entry()
        self.details.setToolTip("")
        if entry is None:
            self.details.clear()
            self._offer_download(NOTHING_CHOSEN)
            return
        self._offer_download("Reading the file list from the Hub…")
        self.details.setHtml(
            f"<h3>{escape(entry.repo_id)}</h3><p>{escape(entry.summary)}</p>"
            "<p>Reading the file list from the Hub…</p>"
        )
        repo, include_all = entry.repo_id, self.include_all.isChecked()
        background.run(
            self,
            "plan",
            lambda: self.downloads.plan(repo, include_all),
            lambda plan: self._show_plan(entry, plan, include_all),
            lambda error: self._show_plan_error(entry, error),
        )

    def _show_plan(self, entry: CatalogEntry, plan: RepoPlan, include_all: bool) -> None:
        # A list for another repo, or for the other choice of the box, came in late.
        if self.selected_entry() != entry or include_all != self.include_all.isChecked():
            return
        rows = "".join(
            f"<tr><td>{escape(f.path)}</td><td align='right'>{format_bytes(f.size)}</td>"
            f"<td>{'LFS sha256' if f.lfs else 'git blob'}</td></tr>"
            for f in plan.files
        )
        skipped = ", ".join(escape(f.path) for f in plan.skipped) or "none"
        self.details.setHtml(
            f"<h3>{escape(entry.repo_id)}</h3><p>{escape(entry.summary)}</p>"
            f"<p><b>Revision</b> {plan.revision[:12]} · <b>{len(plan.files)} files</b>, "
            f"{format_bytes(plan.total_bytes)} · installs to "
            f"{escape(str(self.library.root / plan.folder_name))}</p>"
            f"<table cellpadding='2'>{rows}</table><p><b>Skipped</b> (not needed to run): "
            f"{skipped}</p>"
        )
        self._offer_download("")

    def _offer_download(self, why_not: str) -> None:
        offer(self.download_button, why_not, "Download the files listed, verify and install")

    def _show_plan_error(self, entry: CatalogEntry, error: Exception) -> None:
        if self.selected_entry() == entry:
            self.details.setHtml(
                f"<h3>{escape(entry.repo_id)}</h3>"
                f"<p><b>Cannot list the files:</b> {escape(str(error))}</p>"
            )
            if isinstance(error, HubUnreachable):
                self.details.setToolTip(f"The network said: {error.reason}")
            self._offer_download(f"Cannot download: the file list could not be read ({error})")

    def download_selected(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self.start_download(entry.repo_id)

    def start_download(self, repo: str) -> DownloadJob:
        job = self.downloads.start(repo, include_all=self.include_all.isChecked())
        if job not in self.queue_model.jobs:  # not the download already under way
            self.message.emit(f"Downloading {repo}")
        self._refresh()
        self.queue_model.follow(self.queue_view, job)
        return job

    def _refresh(self) -> None:
        for status in self.queue.refresh():
            self._on_status(status)

    def _on_status(self, status: JobStatus) -> None:
        if status.state == DONE:
            notes = "".join(f"; {note}" for note in status.notes)
            self.message.emit(f"Installed {status.repo_id} in {status.path}{notes}")
            self._mark_installed()
            self.installed.emit(status.path)
        elif status.state == FAILED:
            self.problem.emit(f"Download of {status.repo_id} failed: {status.error}")
        elif status.state == PAUSED:
            self.message.emit(f"Paused {status.repo_id}; Resume continues it")
        elif status.state == CANCELLED:
            self.message.emit(f"Cancelled {status.repo_id}; the files that arrived were deleted")

    def shutdown(self) -> None:
        """Pause running downloads (they resume next time) and stop their threads."""
        self.downloads.shutdown(timeout=2.0)  # never freeze the closing window

    def showEvent(self, event: QShowEvent) -> None:
        if not self._checked_updates:
            self._checked_updates = True
            self.check_updates()
        super().showEvent(event)


class _CatalogFilter(QSortFilterProxyModel):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._text, self._role, self._family = "", "", ""

    def configure(self, text: str, role: str, family: str) -> None:
        self.beginFilterChange()
        self._text, self._role, self._family = text.lower(), role, family
        self.endFilterChange()

    def filterAcceptsRow(self, row: int, parent: object) -> bool:
        model = self.sourceModel()
        assert isinstance(model, CatalogModel)
        entry = model.entries[row]
        return (
            (not self._text or self._text in f"{entry.repo_id} {entry.summary}".lower())
            and (not self._role or entry.role == self._role)
            and (not self._family or entry.family == self._family)
        )


def _date(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp)
    return f"{moment.day} {moment:%B %Y, %H:%M}"


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"
