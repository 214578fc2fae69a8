"""File → Measure Pack…: measure a draft against targets from the Library and write what
TokForge's packs carry (runtime_config.json, the draft recipe, the model card), as
`draftdeck measure-pack` does.

The measuring is a PackMeasureJob on a lane of its own, with an engine worker of its own
(the chat's pair stays loaded); the dialog renders its status snapshots. Nothing is
written until every target is measured: Cancel (or Esc) stops the job and writes
nothing. A runtime_config.json or README.md DraftDeck did not write is replaced only
when the user says so before measuring (the command line's --force), and is then kept
beside as .bak.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from app.core.infra.errors import AlreadyExistsError
from app.core.infra.job_queue import JobQueue
from app.core.infra.units import counted
from app.core.pack.files import BACKUP_SUFFIX
from app.core.pack.library import Library, PackEntry
from app.core.packmaking.card import CardFacts
from app.core.packmaking.make import finish_pack
from app.core.packmaking.measured import TargetMeasurement
from app.core.packmaking.writing import Written
from app.engine.client.pack_measure import MeasureOptions
from app.engine.client.pack_measure_job import (
    FINISHED,
    MeasureState,
    PackMeasureJob,
    PackMeasureStatus,
    measure_queue,
)
from app.ui.base import background
from app.ui.base.dialogs import ask
from app.ui.base.labels import not_started_while
from app.ui.base.open_folder import open_folder
from app.ui.packmaking.job_dialog import BAR_STEPS, JobDialog, problem_words
from app.ui.packmaking.measure_choices import PROGRESS, DraftLook, MeasureChoices, look_at
from app.ui.packmaking.measure_results import results_html, written_words

log = logging.getLogger("draftdeck.ui.measure_pack")
Finished = tuple[Path, Written, dict[str, Any], list[TargetMeasurement]]


def _write(draft: Path, measured: list[TargetMeasurement], force: bool) -> Finished:
    # The question before measuring was about runtime_config.json and the card: a draft
    # recipe DraftDeck did not write is kept as it is (the results say so).
    done, config = finish_pack(draft, measured, CardFacts(), force, force_recipe=False)
    return draft, done, config, measured


class MeasurePackDialog(JobDialog):
    written = Signal(object)  # the draft's folder, once its files are written
    publish_requested = Signal(object)  # the draft's folder

    def __init__(
        self,
        library: Library,
        draft: Path | None = None,
        options: MeasureOptions | None = None,
        measuring_elsewhere: Callable[[], str] = lambda: "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Measure", parent)
        self.setObjectName("measurePackDialog")
        self.setWindowTitle("Measure Pack")
        self.resize(780, 700)
        self._library = library
        self._wanted = draft  # the draft to choose once the Library is read
        self._options = options or MeasureOptions()
        self._elsewhere = measuring_elsewhere
        self._entries: list[PackEntry] = []  # the Library as last read
        self._look: DraftLook | None = None
        self._queue: JobQueue[PackMeasureJob] | None = None
        self._job: PackMeasureJob | None = None
        self._writing = False
        self._force = False  # replace the files DraftDeck did not write (asked first)
        self._cancelled = False  # the user's Cancel holds even if the job ended meanwhile
        self._written: Path | None = None

        self.choices = MeasureChoices()
        self.choices.draft_changed.connect(self._look_at_draft)
        self.choices.ticks_changed.connect(self._update_buttons)
        self.choices.note.setText(
            "Each pair is measured against plain decoding on this computer's CPU, and the "
            "file names this host: a phone's figures differ. Nothing is written until every "
            "ticked target is measured; then runtime_config.json (from this measuring "
            "alone: an unticked target is not in it), the draft recipe (the phone's: only "
            "the sampler measured goes in it), this computer's settings for the pack (the "
            "thread count, precision and memory measured here) and the model card go into "
            "the draft's folder."
        )
        self.results = QTextBrowser()
        self.results.setObjectName("details")
        self.results.setPlaceholderText("The measured table shows here.")
        self.publish_button = self.buttons.addButton(
            "Publish…", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.publish_button.setToolTip("Open File → Publish to Hugging Face… on this pack")
        self.open_button = self.buttons.addButton(
            "Open Folder", QDialogButtonBox.ButtonRole.ActionRole
        )
        for button in (self.publish_button, self.open_button):
            button.setAutoDefault(False)
            button.hide()
        self.publish_button.clicked.connect(self._publish)
        self.open_button.clicked.connect(self._open_folder)

        layout = QVBoxLayout(self)
        layout.addWidget(self.choices, 2)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 3)
        layout.addWidget(self.buttons)
        self._update_buttons()
        self._read_library()

    # -- choosing -------------------------------------------------------------------------

    def choose_draft(self, draft: Path) -> None:
        """Choose `draft` (when nothing runs): the menu's pack, or the one just made."""
        if self.running():
            return
        self._wanted = draft
        self._read_library()

    def _read_library(self) -> None:
        self.say("Reading the Library…")
        background.run(
            self, "drafts", self._library.scan, on_done=self._show_drafts, on_error=self._failed
        )

    def _show_drafts(self, entries: list[PackEntry]) -> None:
        self._entries = entries
        self.choices.show_drafts(entries, self._wanted)
        if self.choices.draft() is None:
            self.say(
                "The Library has no draft pack: File → Make Pack… makes one, and the "
                "Downloads page gets one.",
                problem=True,
            )

    def _look_at_draft(self, draft: PackEntry | None) -> None:
        self._look = None
        self._update_buttons()
        if draft is None:
            background.drop(self, "look")
            return
        entries = self._entries
        self.say(f"Pairing {draft.name} with the Library's packs…")
        background.run(
            self,
            "look",
            lambda: look_at(entries, draft),
            on_done=self._show_look,
            on_error=self._failed,
        )

    def _show_look(self, look: DraftLook) -> None:
        self._look = look
        self.choices.show_targets(look)
        refused = sum(1 for t in look.targets if t.refusal)
        if not look.targets:
            self.say("The Library has no other pack that could be a target for this draft.")
        else:
            self.say(
                f"{len(look.targets) - refused} of {len(look.targets)} packs can be measured "
                f"against {look.draft.name}."
            )

    def _update_buttons(self) -> None:
        running = self.running()
        ready = self._look is not None and bool(self.choices.ticked_paths())
        self.start_button.setEnabled(ready and not running)
        self.show_running(running)
        self.choices.set_running(running)

    # -- measuring ------------------------------------------------------------------------

    def running(self) -> bool:
        return self._job is not None or self._writing

    def start(self) -> None:
        look = self._look
        if self.running() or look is None or not self.start_button.isEnabled():
            return
        busy = self._elsewhere()
        if busy:
            self.say(not_started_while(busy), problem=True)
            return
        if not look.foreign:
            self._begin(look.draft, force=False)
            return
        names = " and ".join(f"a {p.name}" for p in look.foreign)
        backups = " and ".join(p.name + BACKUP_SUFFIX for p in look.foreign)
        them = "them" if len(look.foreign) > 1 else "it"
        ask(
            self,
            "Replace files DraftDeck did not write?",
            f"{look.draft.name} has {names} DraftDeck did not write (TokForge's or a "
            f"person's). Measuring writes its own: replace {them} (kept beside as {backups})?",
            "Replace and Measure",
            lambda: self._begin(look.draft, force=True),
        )

    def _lane(self) -> JobQueue[PackMeasureJob]:
        if self._queue is None:
            self._queue = measure_queue()
            background.watch(self, self._queue, self._on_job_changed)
        return self._queue

    def _begin(self, draft: Path, force: bool) -> None:
        if self.running():
            return
        targets = self.choices.ticked_paths()
        options = dataclasses.replace(self._options, quick=self.choices.quick.isChecked())
        self._force, self._cancelled = force, False
        self._job = PackMeasureJob(draft, targets, options)
        self._written = None
        for button in (self.publish_button, self.open_button):
            button.hide()
        self.results.clear()
        for item in self.choices.items():
            item.setText(PROGRESS, "")
        self.show_progress(0, BAR_STEPS)
        method = "Quick tune" if options.quick else "bench"
        self.say(f"Measuring {draft.name} against {counted(len(targets), 'target')} ({method})…")
        self._update_buttons()
        self._lane().submit(self._job)

    def _on_job_changed(self) -> None:
        job = self._job
        if job is None:
            return
        status = job.status()  # one snapshot for the bar and every row
        self.show_progress(round(job.fraction(status) * BAR_STEPS), BAR_STEPS)
        for index, item in enumerate(self.choices.ticked()):
            item.setText(PROGRESS, self._progress_words(index, status))
        if status.state not in FINISHED:
            return
        self._job = None
        self.bar.setRange(0, 0)
        if status.state == MeasureState.CANCELLED or self._cancelled:
            self._stopped("Cancelled: nothing was written.")
        elif status.state == MeasureState.FAILED:
            self._stopped(f"Not measured, nothing was written: {status.error}", problem=True)
        else:
            self._write(job.draft, list(status.measurements))

    @staticmethod
    def _progress_words(index: int, status: PackMeasureStatus) -> str:
        if index < len(status.measurements):
            m = status.measurements[index]
            return "recorded as disabled" if m.refused else "measured"
        if index == status.current and status.state == MeasureState.MEASURING:
            if not status.pairs_total:
                return "loading…"
            return f"{status.pairs_done}/{status.pairs_total} run pairs"
        return "cancelled" if status.state in FINISHED else "waiting"

    def _write(self, draft: Path, measured: list[TargetMeasurement]) -> None:
        self._writing = True
        self.say(f"Writing the pack's files into {draft}…")
        self._update_buttons()
        force = self._force
        background.run(
            self,
            "write",
            lambda: _write(draft, measured, force),
            on_done=self._on_written,
            on_error=lambda error: self._on_write_failed(draft, measured, error),
        )

    def _on_write_failed(
        self, draft: Path, measured: list[TargetMeasurement], error: Exception
    ) -> None:
        if not isinstance(error, AlreadyExistsError):
            self._stopped(f"Measured, but not written: {problem_words(error)}", problem=True)
            return
        # A file of someone else's came while it measured: asked now, measurements kept.
        self._stopped(
            f"Measured, but not written yet: {error.path.name} is not DraftDeck's.", problem=True
        )
        ask(
            self,
            "Replace a file DraftDeck did not write?",
            f"{error.path.name} appeared in {draft.name} while it was measured, and "
            f"DraftDeck did not write it: replace it with the measured one? It is kept "
            f"as {error.path.name}{BACKUP_SUFFIX}.",
            "Replace",
            lambda: self._write_anyway(draft, measured),
        )

    def _write_anyway(self, draft: Path, measured: list[TargetMeasurement]) -> None:
        self._force = True
        self._write(draft, measured)  # the measurements are kept: nothing is measured again

    def _on_written(self, finished: Finished) -> None:
        draft, done, config, measured = finished
        self.results.setHtml(results_html(measured, config))
        self._written = draft
        if self._look is not None:  # its runtime_config.json and card are DraftDeck's now
            self._look = dataclasses.replace(self._look, foreign=())
        self._stopped(written_words(done) + " Publish… puts the pack on the Hub with its card.")
        for button in (self.publish_button, self.open_button):
            button.show()
        self.written.emit(draft)

    def _stopped(self, words: str, problem: bool = False) -> None:
        self._writing = False
        self.bar.setRange(0, 0)
        self.say(words, problem)
        self._update_buttons()

    def _failed(self, error: Exception) -> None:
        log.warning("measure pack: %s", error)
        self.say(problem_words(error), problem=True)

    # -- after ----------------------------------------------------------------------------

    def _publish(self) -> None:
        if self._written is not None:
            self.publish_requested.emit(self._written)

    def _open_folder(self) -> None:
        if self._written is not None and (problem := open_folder(self._written)):
            self.say(problem, problem=True)

    # -- stopping -------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the measuring (the files are written only after it, in a moment that
        is not stopped halfway)."""
        if self._job is not None:
            self._cancelled = True
            self.say("Cancelling…")
            self._job.cancel()

    def shutdown(self) -> None:
        if self._queue is not None:
            self._queue.shutdown(timeout=2.0)  # cancels (kills its worker); never freezes
            self._queue = None
