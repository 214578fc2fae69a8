"""File → Publish to Hugging Face…: a pack folder to a Hub model repo, with its card and
its export check shown first (a pack whose export was not verified is published only
when the user says so), the token's source named (never the token), progress by files
and bytes, and Cancel."""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.hub.hub_api import HubConfig
from app.core.hub.plan import check_repo_id
from app.core.hub.publish import Published, PublishPlan, UploadProgress, publish_plan
from app.core.infra.errors import DraftDeckError
from app.core.infra.jsonfile import read_text
from app.core.infra.settings import Settings
from app.core.infra.units import format_bytes
from app.core.pack.bundle import read_bundle
from app.core.pack.export_check import ExportVerdict, SavedExportCheck, read_export_check
from app.core.packmaking.card import CARD
from app.core.packmaking.export_process import ProcessCancelled, StreamedProcess
from app.ui.base import background
from app.ui.base.dialogs import ask
from app.ui.base.labels import wrap_to_width
from app.ui.packmaking.hub_token import token_source
from app.ui.packmaking.job_dialog import JobDialog, folder_row, problem_words, say_in
from app.ui.packmaking.publish_run import publish_in_child

log = logging.getLogger("draftdeck.ui.publish")
NO_CARD = (
    "This pack has no model card (README.md), so its Hub page will be empty: "
    "`draftdeck card PACK` writes one from the pack's files."
)
NEVER_CHECKED = (
    "Note: this pack's export was never checked against its source model (its card says "
    "so). `draftdeck verify-export PACK SOURCE` checks it; Make Pack does after exporting."
)


@dataclass(frozen=True)
class _Look:
    """What the dialog shows before publishing: the plan (with a valid repo id), the card
    and the export check (None: never checked)."""

    plan: PublishPlan | None
    card: str | None
    check: SavedExportCheck | None


def _log_line(line: str) -> None:
    log.info("publish: %s", line)  # the child's own words, for the log file


def _look(folder: Path, repo_id: str | None) -> _Look:
    if repo_id is not None:
        plan: PublishPlan | None = publish_plan(folder, repo_id)
    else:
        plan = None
        read_bundle(folder)  # a folder that is no pack is said now, not at Publish
    card = folder / CARD
    check = plan.export_check if plan is not None else read_export_check(folder)
    return _Look(plan, read_text(card) if card.is_file() else None, check)


def check_words(check: SavedExportCheck | None) -> tuple[str, bool]:
    """What the dialog says of the pack's export check, and whether it is a problem."""
    if check is None:
        return NEVER_CHECKED, False
    if check.verdict == ExportVerdict.NOT_VERIFIED:
        return f"{check.words()} Publishing asks first.", True
    return check.headline(), not check.verified


class PublishDialog(JobDialog):
    published = Signal(object)  # Published

    def __init__(
        self, settings: Settings, folder: Path | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__("Publish", parent)
        self.setObjectName("publishDialog")
        self.setWindowTitle("Publish to Hugging Face")
        self.resize(720, 620)
        self._config = HubConfig.from_settings(settings)
        self._token = token_source(settings)
        self._plan: PublishPlan | None = None
        self._process: StreamedProcess | None = None

        self.folder_edit = QLineEdit(str(folder) if folder is not None else "")
        self.folder_edit.setPlaceholderText("the pack folder to upload")
        self.repo_edit = QLineEdit()
        self.repo_edit.setPlaceholderText("owner/name")
        self.private_box = QCheckBox("Private repository (an existing repo keeps its visibility)")
        token_label = wrap_to_width(QLabel())
        say_in(token_label, self._token.words, problem=not self._token.found)
        form = QFormLayout()
        form.addRow("Pack folder:", folder_row(self.folder_edit, "The pack to publish"))
        form.addRow("Repository:", self.repo_edit)
        form.addRow("", self.private_box)
        form.addRow("Hub:", QLabel(self._config.place()))
        form.addRow("Token:", token_label)
        self.summary = wrap_to_width(QLabel())
        self.check_label = wrap_to_width(QLabel())
        self.check_label.setObjectName("exportCheck")
        self.card_view = QPlainTextEdit()
        self.card_view.setObjectName("cardView")
        self.card_view.setReadOnly(True)
        self.card_view.setPlaceholderText("The model card (README.md) that will be uploaded")

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(self.check_label)
        layout.addWidget(QLabel("Model card:"))
        layout.addWidget(self.card_view, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.folder_edit.textChanged.connect(self._look_again)
        self.repo_edit.textChanged.connect(self._look_again)
        self.private_box.toggled.connect(self._look_again)
        self._look_again()

    # -- before publishing ----------------------------------------------------------------

    def _repo_id(self) -> tuple[str | None, str]:
        """The repo id if it is one the Hub accepts, else None and why not."""
        repo_id = self.repo_edit.text().strip()
        if not repo_id:
            return None, "Type the repository as owner/name (it is created if it does not exist)."
        try:
            check_repo_id(repo_id)
        except DraftDeckError as exc:
            return None, str(exc)
        return repo_id, ""

    def _look_again(self) -> None:
        self._plan = None
        self._update_buttons()
        text = self.folder_edit.text().strip()
        if not text:
            background.drop(self, "look")
            say_in(self.summary, "Choose the pack folder to publish.", problem=False)
            self.check_label.clear()
            self.card_view.clear()
            return
        folder = Path(text).expanduser()
        repo_id, why_not = self._repo_id()
        say_in(self.summary, why_not or "Reading the pack…", problem=bool(why_not))
        background.run(
            self,
            "look",
            lambda: _look(folder, repo_id),
            on_done=self._show_look,
            on_error=self._on_look_failed,
        )

    def _show_look(self, look: _Look) -> None:
        self.card_view.setPlainText(look.card if look.card is not None else NO_CARD)
        say_in(self.check_label, *check_words(look.check))
        self._plan = plan = look.plan
        if plan is not None:
            private = " as a private repository" if self.private_box.isChecked() else ""
            say_in(
                self.summary,
                f"{len(plan.files)} files ({format_bytes(plan.total_bytes)}) go to "
                f"{plan.repo_id} on {self._config.place()}{private} in one commit.",
                problem=False,
            )
        self._update_buttons()

    def _on_look_failed(self, error: Exception) -> None:
        self.card_view.clear()
        self.check_label.clear()
        say_in(self.summary, problem_words(error), problem=True)

    def _update_buttons(self) -> None:
        running = self.running()
        self.start_button.setEnabled(self._plan is not None and self._token.found and not running)
        self.show_running(running)
        for widget in (self.folder_edit, self.repo_edit, self.private_box):
            widget.setEnabled(not running)

    # -- publishing -----------------------------------------------------------------------

    def running(self) -> bool:
        return self._process is not None

    def start(self) -> None:
        """Publish; a pack whose export was not verified only once the user says so (the
        question's default is not to)."""
        plan = self._plan
        if plan is None or not self._token.found or self.running():
            return
        check = plan.export_check
        if check is None or check.verdict != ExportVerdict.NOT_VERIFIED:
            self._publish(plan, force=False)
            return
        differs = "\n".join(f"• {reason}" for reason in check.reasons) or check.figures()
        ask(
            self,
            "Export not verified",
            f"The export of {plan.folder.name} was not verified against its source model:"
            f"\n\n{differs}\n\nA pack that fails this check may answer in garbage. "
            f"Publish it to {plan.repo_id} anyway?",
            "Publish Anyway",
            lambda: self._publish(plan, force=True),
        )

    def _publish(self, plan: PublishPlan, force: bool) -> None:
        if self.running():
            return
        process = self._process = StreamedProcess()
        private, env = self.private_box.isChecked(), self._token.env
        self.say(
            f"Uploading {len(plan.files)} files ({format_bytes(plan.total_bytes)}) to "
            f"{plan.repo_id}…"
        )
        self._update_buttons()
        tell = background.speaker(self, self._on_progress)

        def work() -> Published:
            folder, repo_id = plan.folder, plan.repo_id
            return publish_in_child(process, folder, repo_id, private, force, env, _log_line, tell)

        background.run(
            self,
            "publish",
            work,
            on_done=self._on_published,
            on_error=lambda error: self._on_publish_failed(plan.repo_id, error),
        )

    def _on_progress(self, progress: UploadProgress) -> None:
        process = self._process
        if process is not None and not process.cancelled:  # not one heard after a cancel
            self.show_progress(progress.bytes_done, progress.total_bytes)
            self.say(progress.words())

    def cancel(self) -> None:
        if self._process is not None:
            self.say("Cancelling…")
            self._process.cancel()

    def shutdown(self) -> None:
        self.cancel()

    def _finished(self, text: str, problem: bool, rich: bool = False) -> None:
        self._process = None
        self.say(text, problem, rich)
        self._update_buttons()

    def _on_published(self, published: Published) -> None:
        url = html.escape(published.url)
        self._finished(
            f'Published <a href="{url}">{url}</a> (commit {html.escape(published.commit[:12])}).',
            problem=False,
            rich=True,
        )
        self.published.emit(published)

    def _on_publish_failed(self, repo_id: str, error: Exception) -> None:
        if isinstance(error, ProcessCancelled):
            self._finished(
                f"Cancelled: {repo_id} keeps its last complete commit (a commit lands "
                "whole or not at all).",
                problem=False,
            )
        else:
            self._finished(f"Not published: {problem_words(error)}", problem=True)
