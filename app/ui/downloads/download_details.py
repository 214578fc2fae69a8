"""The Downloads page's right-hand pane: the selected repo's files as a download would
fetch them (a summary, and a table of every file: plan_model.py), and what can be done
with it — Download, or for a pack installed at the
Hub's revision Re-download and Verify (nothing is fetched again without asking), and
Remove from List for a repo the user typed."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.hub.catalog import CatalogEntry
from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HubUnreachable
from app.core.hub.pack_check import PackCheck
from app.core.hub.plan import SKIPPED_KINDS, RepoPlan
from app.core.infra.errors import HubError
from app.core.infra.units import format_bytes
from app.ui.base import background
from app.ui.base.fitted_table import FittedTable
from app.ui.base.job_models import offer
from app.ui.base.table_model import setup_table
from app.ui.downloads.plan_model import PlanModel

NOTHING_CHOSEN = "Select a repository in the list first"
NOTHING_SHOWN = "Select a repository to see its files and sizes."
ADDED = "added"  # CatalogEntry.source of a repo the user typed
NAMED_SKIPPED = 10  # skipped files named in the summary; more are only counted


class RepoDetails(QWidget):
    download = Signal(str, bool)  # repo, force (fetch again though installed and intact)
    removed = Signal(str)  # a repo the user typed, taken out of the catalog
    message = Signal(str)

    def __init__(self, downloads: Downloads, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.downloads = downloads
        self.entry: CatalogEntry | None = None
        self._plan: RepoPlan | None = None
        self._up_to_date = False
        self.details = QTextBrowser()
        self.details.setObjectName("details")
        self.details.setPlaceholderText(NOTHING_SHOWN)
        self.files_model = PlanModel()
        columns = PlanModel.COLUMNS
        # The names give way (elided, whole in the tooltip) before the sizes are cut.
        self.files_view = FittedTable(((columns.index("File"), 160),))
        setup_table(self.files_view)
        # Fitted by the table from a window's height of rows: a column sized to its
        # contents would measure a thousand rows of a big listing at every layout.
        self.files_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.files_view.setModel(self.files_model)
        self.files_view.hide()
        self.include_all = QCheckBox("Also fetch export files (ONNX, llm.mnn.json)")
        self.include_all.setToolTip(
            f"Files no runtime reads ({SKIPPED_KINDS}); the file list shows what is skipped"
        )
        self.remove_button = QPushButton("Remove from List")
        self.verify_button = QPushButton("Verify")
        self.download_button = QPushButton("Download")
        self._why_not = ""  # why Download is not offered, downloads under way aside
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.details, 1)
        layout.addWidget(self.files_view, 2)
        layout.addWidget(self.include_all)
        # Under the box, not beside it: one row of both would narrow the catalog at 1024 px.
        row = QHBoxLayout()
        row.addStretch(1)
        for button in (self.remove_button, self.verify_button, self.download_button):
            row.addWidget(button)
        layout.addLayout(row)
        # The file list shown is the one Download fetches: list it again for the new choice.
        self.include_all.toggled.connect(lambda _checked: self.show_entry(self.entry))
        self.download_button.clicked.connect(self._on_download_clicked)
        self.verify_button.clicked.connect(self.verify)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.show_entry(None)

    def show_entry(self, entry: CatalogEntry | None) -> None:
        """Show `entry` and read its file list from the Hub (None: nothing selected)."""
        self.entry, self._plan, self._up_to_date = entry, None, False
        self.details.setToolTip("")
        self.files_model.set_plan(None)
        self.files_view.hide()
        self._offer_actions()
        if entry is None:
            self.details.clear()
            self._offer_download(NOTHING_CHOSEN)
            return
        self._offer_download("Reading the file list from the Hub…")
        self.details.setHtml(
            f"{self._heading()}<p>{self._installed_line()}</p><p>Reading the file list from "
            "the Hub…</p>"
        )
        repo, include_all = entry.repo_id, self.include_all.isChecked()
        background.run(
            self,
            "plan",
            lambda: self.downloads.plan(repo, include_all),
            lambda plan: self._show_plan(entry, plan, include_all),
            lambda error: self._show_plan_error(entry, error),
        )

    def refresh(self) -> None:
        """Show the selected repo again (a download of it finished or was discarded)."""
        self.show_entry(self.entry)

    # -- what the pane says -----------------------------------------------------------------

    def _heading(self) -> str:
        assert self.entry is not None
        summary = f"<p>{escape(self.entry.summary)}</p>" if self.entry.summary else ""
        return f"<h3>{escape(self.entry.repo_id)}</h3>{summary}"

    def _installed_line(self, plan: RepoPlan | None = None) -> str:
        """Whether the repo is installed, and how it compares with the Hub's revision."""
        assert self.entry is not None
        found = self.downloads.installed_pack(self.entry.repo_id)
        if found is None:
            return ""
        path, revision = found
        where = f"in {escape(str(path))}"
        if plan is None:
            return f"<b>Installed</b> (revision {revision[:12]}) {where}"
        if plan.revision == revision:
            return (
                f"<b>Installed and up to date</b> (revision {revision[:12]}) {where}. "
                "Verify checks its files; Re-download fetches them all again."
            )
        return (
            f"<b>Installed</b> revision {revision[:12]} {where}; the Hub has "
            f"{plan.revision[:12]}: Update installs it, keeping your recipe edits."
        )

    def _show_plan(self, entry: CatalogEntry, plan: RepoPlan, include_all: bool) -> None:
        # A list for another repo, or for the other choice of the box, came in late.
        if self.entry != entry or include_all != self.include_all.isChecked():
            return
        self._plan = plan
        found = self.downloads.installed_pack(entry.repo_id)
        self._up_to_date = found is not None and found[1] == plan.revision
        # The files go to the table (one row each, made as shown); the text says only
        # the totals: a 100,000-file listing as HTML was 935 MB and froze the window.
        self.files_model.set_plan(plan, include_all)
        self.files_view.show()
        installs_to = self.downloads.root / plan.folder_name
        self.details.setHtml(
            f"{self._heading()}<p>{self._installed_line(plan)}</p>"
            f"<p><b>Revision</b> {plan.revision[:12]} · <b>{len(plan.files):,} files</b>, "
            f"{format_bytes(plan.total_bytes)} · installs to {escape(str(installs_to))}</p>"
            f"<p><b>Skipped</b> (not fetched; the list says why): {_skipped_words(plan)}</p>"
        )
        self._offer_download("")

    def _show_plan_error(self, entry: CatalogEntry, error: Exception) -> None:
        if self.entry != entry:
            return
        remove = ""
        if entry.source == ADDED and isinstance(error, HubError) and error.code == "not_found":
            remove = "<p>You added this repository: Remove from List takes it out of the list.</p>"
        self.details.setHtml(
            f"{self._heading()}<p>{self._installed_line()}</p>"
            f"<p><b>Cannot list the files:</b> {escape(str(error))}</p>{remove}"
        )
        if isinstance(error, HubUnreachable):
            self.details.setToolTip(f"The network said: {error.reason}")
        self._offer_download(f"Cannot download: the file list could not be read ({error})")

    # -- the buttons --------------------------------------------------------------------------

    def follow_queue(self) -> None:
        """A download started or stopped: the Download button says whether this repo's
        is under way (a second click only showed the same row again)."""
        self._offer_download(self._why_not)

    def _offer_download(self, why_not: str) -> None:
        self._why_not = why_not
        entry = self.entry
        running = {job.repo_id for job in self.downloads.running()}
        if not why_not and entry is not None and entry.repo_id in running:
            why_not = "Downloading now: follow it, or pause it, in the queue below"
        installed = self.entry is not None and self.downloads.installed_pack(self.entry.repo_id)
        if self._up_to_date:
            text, what = "Re-download", "Fetch every file again, though the pack is up to date"
        elif installed and self._plan is not None:
            text, what = "Update", "Install the Hub's revision, keeping your recipe edits"
        else:
            text, what = "Download", "Download the files listed, verify and install"
        self.download_button.setText(text)
        offer(self.download_button, why_not, what)
        self._offer_actions()

    def _offer_actions(self) -> None:
        entry = self.entry
        installed = entry is not None and self.downloads.installed_pack(entry.repo_id)
        offer(
            self.verify_button,
            "" if installed else "Not installed: nothing to verify",
            "Check every installed file against the Hub's hashes (offline)",
        )
        offer(
            self.remove_button,
            ""
            if entry is not None and entry.source == ADDED
            else "Only a repository you added can be removed from the list",
            "Take this repository out of the list (nothing on disk is touched)",
        )

    def _on_download_clicked(self) -> None:
        if self.entry is not None:
            self.download.emit(self.entry.repo_id, self._up_to_date)

    def verify(self) -> None:
        entry = self.entry
        if entry is None:
            return
        self.verify_button.setEnabled(False)
        self.verify_button.setText("Verifying…")
        background.run(
            self,
            "verify",
            lambda: self.downloads.verify(entry.repo_id),
            lambda check: self._on_verified(entry, check),
            lambda error: self._on_verified(entry, error),
        )

    def _on_verified(self, entry: CatalogEntry, result: PackCheck | Exception | None) -> None:
        self.verify_button.setText("Verify")
        self._offer_actions()
        if isinstance(result, PackCheck):
            said = f"{entry.repo_id}: {result.summary()}"
        elif result is None:
            said = f"{entry.repo_id} is not installed"
        else:
            said = f"Could not verify {entry.repo_id}: {result}"
        if self.entry == entry:
            self.details.append(f"<p><b>Verified:</b> {escape(said)}</p>")
        self.message.emit(said)

    def _on_remove_clicked(self) -> None:
        entry = self.entry
        if entry is not None and self.downloads.remove_repo(entry.repo_id):
            self.message.emit(f"Removed {entry.repo_id} from the list")
            self.removed.emit(entry.repo_id)


def _skipped_words(plan: RepoPlan) -> str:
    """The skipped files by name, or only how many when there are more than a few."""
    if len(plan.skipped) > NAMED_SKIPPED:
        return f"{len(plan.skipped):,} files, listed below the files fetched"
    return ", ".join(escape(f.path) for f in plan.skipped) or "none"
