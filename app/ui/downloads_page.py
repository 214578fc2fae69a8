"""The Downloads page: the catalog, a repo's file plan, and the download queue."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QItemSelection, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.hub.catalog import CatalogEntry, load_catalog, refresh_live
from app.core.hub.hub_api import HubConfig, fetch_plan
from app.core.hub.job import DONE, FAILED, FINISHED, DownloadJob, JobStatus
from app.core.hub.manager import DownloadManager
from app.core.hub.plan import RepoPlan, unsafe_name
from app.core.hub.updates import check_update
from app.core.infra.errors import HubError
from app.core.infra.settings import save_settings
from app.core.infra.units import format_bytes
from app.core.pack.files import installed_source
from app.core.pack.library import Library
from app.ui import background
from app.ui.dialogs import show_error
from app.ui.download_models import ENTRY_ROLE, CatalogModel, QueueModel
from app.ui.job_models import ProgressDelegate
from app.ui.table_model import setup_table

POLL_MS = 200


class DownloadsPage(QWidget):
    installed = Signal(str)  # a pack folder that was just installed
    message = Signal(str)

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.manager = DownloadManager()
        self._checked_updates = False
        self._updates: set[str] = set()  # repos with a newer revision on the Hub

        title = QLabel("Downloads")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Draft packs and targets on the Hugging Face Hub. Files are verified "
            "before a pack is installed; interrupted downloads resume."
        )
        hint.setObjectName("pageHint")
        hint.setWordWrap(True)

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
        self.add_edit = QLineEdit()
        self.add_edit.setPlaceholderText("owner/repo to add")
        self.add_button = QPushButton("Add Repo")

        self.catalog_model = CatalogModel()
        self.catalog_proxy = _CatalogFilter(self)
        self.catalog_proxy.setSourceModel(self.catalog_model)
        self.catalog_view = QTableView()
        self.catalog_view.setModel(self.catalog_proxy)
        setup_table(self.catalog_view)
        self.catalog_view.setSortingEnabled(True)
        self.catalog_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)

        self.details = QTextBrowser()
        self.details.setObjectName("details")
        self.include_all = QCheckBox("Also fetch export files (ONNX)")
        self.download_button = QPushButton("Download")
        self.download_button.setEnabled(False)
        details_box = QWidget()
        details_layout = QVBoxLayout(details_box)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.details, 1)
        row = QHBoxLayout()
        row.addWidget(self.include_all)
        row.addStretch(1)
        row.addWidget(self.download_button)
        details_layout.addLayout(row)

        self.queue_model = QueueModel()
        self.queue_view = QTableView()
        self.queue_view.setModel(self.queue_model)
        setup_table(self.queue_view)
        self.queue_view.setItemDelegateForColumn(
            QueueModel.COLUMNS.index("Progress"), ProgressDelegate(self.queue_view)
        )
        self.pause_button = QPushButton("Pause")
        self.retry_button = QPushButton("Resume / Retry")
        self.cancel_button = QPushButton("Cancel")
        self.clear_button = QPushButton("Clear Finished")
        queue_box = QWidget()
        queue_layout = QVBoxLayout(queue_box)
        queue_layout.setContentsMargins(0, 0, 0, 0)
        queue_layout.addWidget(self.queue_view, 1)
        buttons = QHBoxLayout()
        for button in (self.pause_button, self.retry_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.clear_button)
        queue_layout.addLayout(buttons)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.catalog_view)
        top.addWidget(details_box)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        main = QSplitter(Qt.Orientation.Vertical)
        main.addWidget(top)
        main.addWidget(queue_box)
        main.setStretchFactor(0, 3)
        main.setStretchFactor(1, 2)

        filters = QHBoxLayout()
        for widget in (self.search, self.role_filter, self.family_filter):
            filters.addWidget(widget)
        filters.addStretch(1)
        adding = QHBoxLayout()
        adding.addWidget(self.refresh_button)
        adding.addWidget(self.age_label)
        adding.addStretch(1)
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
        self.download_button.clicked.connect(self.download_selected)
        self.pause_button.clicked.connect(lambda: self._on_job_action("pause"))
        self.retry_button.clicked.connect(lambda: self._on_job_action("retry"))
        self.cancel_button.clicked.connect(lambda: self._on_job_action("cancel"))
        self.clear_button.clicked.connect(self._on_clear)
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)
        self.reload_catalog()

    def config(self) -> HubConfig:
        return HubConfig.from_settings(self.library.settings)

    # -- catalog ----------------------------------------------------------------------------

    def reload_catalog(self) -> None:
        catalog = load_catalog(self.library.settings.extra_repos)
        self.catalog_model.set_entries(list(catalog.entries))
        age = catalog.age_seconds()
        self.age_label.setText(
            "Hub listing: never fetched" if age is None else f"Hub listing: {_age(age)} old"
        )
        self._mark_installed()

    def refresh_from_hub(self) -> None:
        self.refresh_button.setEnabled(False)
        self.age_label.setText("Hub listing: refreshing…")
        config = self.config()
        background.run(
            self,
            "refresh",
            lambda: refresh_live(config),
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
        show_error(
            self, "Could not refresh the catalog", f"{error}\n\nThe cached catalog is still shown."
        )

    def add_repo(self) -> None:
        repo = self.add_edit.text().strip()
        if repo.count("/") != 1 or unsafe_name(repo):
            show_error(self, "Not a repository id", f"{repo!r} is not of the form owner/name.")
            return
        settings = self.library.settings
        if repo not in settings.extra_repos:
            settings.extra_repos.append(repo)
            save_settings(settings)
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
        marks: dict[str, str] = {}
        for path, _ref in self.library.pack_folders():
            source = installed_source(path)
            if source and isinstance(source.get("repo"), str):
                marks[source["repo"]] = "installed"
        marks.update({repo: "update available" for repo in self._updates if repo in marks})
        self.catalog_model.set_installed(marks)

    def _on_updates(self, repos: set[str]) -> None:
        self._updates = repos
        self._mark_installed()

    def check_updates(self) -> None:
        config = self.config()
        folders = [path for path, _ref in self.library.pack_folders()]

        def work() -> set[str]:
            found = set()
            for pack in (p for p in folders if installed_source(p)):
                try:
                    info = check_update(config, pack)
                except HubError:
                    continue  # offline or gone: keep "installed"
                if info is not None and info.available:
                    found.add(info.repo_id)
            return found

        background.run(self, "updates", work, self._on_updates)

    # -- plan and download ------------------------------------------------------------------

    def selected_entry(self) -> CatalogEntry | None:
        rows = self.catalog_view.selectionModel().selectedRows()
        entry = rows[0].data(ENTRY_ROLE) if rows else None
        return entry if isinstance(entry, CatalogEntry) else None

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        entry = self.selected_entry()
        self.download_button.setEnabled(entry is not None)
        if entry is None:
            self.details.clear()
            return
        self.details.setHtml(
            f"<h3>{escape(entry.repo_id)}</h3><p>{escape(entry.summary)}</p>"
            "<p>Reading the file list from the Hub…</p>"
        )
        config, include_all = self.config(), self.include_all.isChecked()
        repo = entry.repo_id
        background.run(
            self,
            "plan",
            lambda: fetch_plan(config, repo, include_all=include_all),
            lambda plan: self._show_plan(entry, plan),
            lambda error: self._show_plan_error(entry, error),
        )

    def _show_plan(self, entry: CatalogEntry, plan: RepoPlan) -> None:
        if self.selected_entry() != entry:
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

    def _show_plan_error(self, entry: CatalogEntry, error: Exception) -> None:
        if self.selected_entry() == entry:
            self.details.setHtml(
                f"<h3>{escape(entry.repo_id)}</h3>"
                f"<p><b>Cannot list the files:</b> {escape(str(error))}</p>"
            )

    def download_selected(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self.start_download(entry.repo_id)

    def start_download(self, repo: str) -> DownloadJob:
        existing = self.manager.active(repo)
        if existing is not None:
            return existing
        job = DownloadJob(
            repo, self.library.root, self.config(), include_all=self.include_all.isChecked()
        )
        self.manager.submit(job)
        self.queue_model.add_job(job)
        self.timer.start()
        self.message.emit(f"Downloading {repo}")
        return job

    def poll(self) -> None:
        for status in self.queue_model.refresh():
            self._on_status(status)
        if self.queue_model.all_shown_in(FINISHED):
            self.timer.stop()

    def _on_status(self, status: JobStatus) -> None:
        if status.state == DONE:
            self.message.emit(f"Installed {status.repo_id} in {status.path}")
            self._updates.discard(status.repo_id)  # just installed: the newest revision
            self._mark_installed()
            self.installed.emit(status.path)
        elif status.state == FAILED:
            self.message.emit(f"Download of {status.repo_id} failed: {status.error}")

    def _on_job_action(self, action: str) -> None:
        job = self.queue_model.selected_job(self.queue_view)
        if job is None:
            return
        if action == "pause":
            job.pause()
        elif action == "cancel":
            job.cancel()
        elif job.status().state in FINISHED and job.status().state != DONE:
            self.manager.submit(job)  # resumes from the kept .part files
            self.timer.start()
        self.poll()

    def _on_clear(self) -> None:
        self.manager.forget(self.queue_model.remove_rows_where(set(FINISHED)))

    def shutdown(self) -> None:
        """Pause running downloads (they resume next time) and stop their threads."""
        self.timer.stop()
        self.manager.shutdown(timeout=2.0)  # never freeze the closing window

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


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"
