"""File → Make Pack…: export an HF model to an MNN pack, prove the export against its
source, and add the pack to the Library.

The steps, each off the GUI thread: fetch the source (a repo id: its config.json alone
first, so a block it refuses is offered as for a folder before any weight comes; its code
only once trusted), check the choices (export_checks), ask before running code the model folder
carries (default No) and before creating the export environment (its folder and disk),
build it (ExportEnvJob), export (ExportJob, into a hidden partial folder), verify it
there (the verify-export client) and record the outcome in it, move it into place, add a
verified pack to the Library by reference (it stays where the user made it), and offer a
made draft's next step, Measure…. Esc cancels the running step (and closes the dialog
when nothing runs); Return starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from app.core.hub.hub_api import HubConfig
from app.core.infra.errors import AlreadyExistsError, FileError
from app.core.infra.job_queue import JobQueue
from app.core.pack.library import Library
from app.core.packmaking import export_run
from app.core.packmaking.custom_code import CustomCodeRefused
from app.core.packmaking.export_checks import (
    ExportPlan,
    ExportRefused,
    ExportSettings,
    plan_export,
)
from app.core.packmaking.export_env import ExportEnv, ExportEnvPlan, plan_export_env
from app.core.packmaking.export_env_build import ExportEnvJob
from app.core.packmaking.export_progress import plain_line
from app.core.packmaking.export_run import ExportJob, ExportStatus, source_folder
from app.ui.base import background
from app.ui.base.dialogs import choose
from app.ui.packmaking.job_dialog import JobDialog, problem_words
from app.ui.packmaking.make_pack_form import Check, MakePackForm, check_choice, describe_plan
from app.ui.packmaking.pack_verify import VerifyStep

log = logging.getLogger("draftdeck.ui.make_pack")
Plans = tuple[ExportPlan, ExportEnvPlan]


class MakePackDialog(JobDialog):
    made = Signal(object)  # the made pack's folder (Path), once it is in the Library
    measure_requested = Signal(object)  # a made draft's folder: measure it next

    def __init__(
        self, library: Library, hub: HubConfig | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__("Make Pack", parent)
        self.setObjectName("makePackDialog")
        self.setWindowTitle("Make Pack")
        self.resize(760, 600)
        self._library = library
        self._hub = hub or HubConfig()
        self._check: Check | None = None
        self._step = ""  # the step running ("" when none): said on Cancel
        self._queue: JobQueue[ExportEnvJob | ExportJob] | None = None
        self._job: ExportEnvJob | ExportJob | None = None
        self._after_env: ExportPlan | None = None  # the export waiting for the environment
        self._made_draft: Path | None = None  # the draft pack just made and verified
        self._trust = False  # the user said Yes to running the source folder's own code
        self._verifying: ExportJob | None = None  # the made export under verification
        self._verifying_draft = False  # the pack under verification is a draft
        self._verify = VerifyStep(self)
        self._verify.finished.connect(self._on_verified)
        self._verify.progress.connect(self._on_verify_progress)

        self.form = MakePackForm()
        self.form.changed.connect(self._check_again)
        # What the status says of a run (an error, an outcome) is about the inputs it ran
        # on: it goes when they change.
        self.form.source_edit.textChanged.connect(self._forget_outcome)
        self.form.out_edit.textChanged.connect(self._forget_outcome)
        self.form.adjust_button.clicked.connect(self._adjust)
        self.figures = QTextBrowser()
        self.figures.setObjectName("details")
        self.figures.setOpenExternalLinks(False)
        self.measure_button = self.buttons.addButton(
            "Measure…", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.measure_button.setToolTip(
            "Measure the new draft against targets from the Library (File → Measure Pack…)"
        )
        self.measure_button.setAutoDefault(False)
        self.measure_button.hide()
        self.measure_button.clicked.connect(self._measure)
        self.figures.setPlaceholderText(
            "After the export, the pack is run beside its source model on prose, code, "
            "Chinese and a chat turn; the figures show here."
        )

        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addWidget(self.figures, 1)
        layout.addWidget(self.buttons)
        self._check_again()

    # -- the checks, before anything runs ----------------------------------------------

    def _check_again(self) -> None:
        self._check = None
        self.form.adjust_button.hide()
        source, out = self.form.source(), self.form.out_folder()
        if source.problem or out is None:
            background.drop(self, "check")
            self.form.say(source.problem or "Choose the output folder.")
        elif source.folder is None:
            background.drop(self, "check")
            self.form.say(
                f"{source.repo_id} is checked when Make Pack starts: its config.json first, "
                "then the rest once its files are fetched from the Hub.",
                problem=False,
            )
        else:
            folder, settings = source.folder, self.form.settings()
            self.form.say("Checking…")
            background.run(
                self,
                "check",
                lambda: check_choice(folder, out, settings),
                on_done=self._show_check,
                on_error=lambda error: self.form.say(problem_words(error), problem=True),
            )
        self._update_buttons()

    def _show_check(self, check: Check) -> None:
        self._check = check
        if check.code:
            self.form.say(check.refusal, problem=True)
        elif check.plan is not None:
            ready = "Ready: " + describe_plan(check.plan)
            self.form.say("\n".join((*check.plan.adjusted, ready)))
        else:
            self.form.say(check.refusal, problem=True)
            adjusted = check.adjusted
            if adjusted is not None:
                block = "one per row" if adjusted.block == 0 else str(adjusted.block)
                self.form.adjust_button.setText(f"Use Block {block}")
                self.form.adjust_button.setToolTip("\n".join(check.adjust_words))
            self.form.adjust_button.setVisible(adjusted is not None)
        self._update_buttons()

    def _forget_outcome(self) -> None:
        if not self.running():
            self.say("")

    def _adjust(self) -> None:
        if self._check is not None and self._check.adjusted is not None:
            self.form.set_settings(self._check.adjusted)

    def _update_buttons(self) -> None:
        running = bool(self._step)
        source = self.form.source()
        checked = self._check is not None and (
            self._check.plan is not None or bool(self._check.code)  # Start asks
        )
        # A repo is checked once fetched: startable unless its config.json refused these
        # settings (a refusal stands until the choices change).
        fetchable = source.repo_id is not None and self.form.out_folder() is not None
        startable = checked or (fetchable and self._check is None)
        self.start_button.setEnabled(startable and not running)
        self.show_running(running)
        self.form.set_running(running)

    # -- running ----------------------------------------------------------------------

    def running(self) -> bool:
        return bool(self._step)

    def start(self) -> None:
        if self.running() or not self.start_button.isEnabled():
            return
        self._begin(trust=False)

    def _begin(self, trust: bool) -> None:
        self._trust = trust
        self.figures.clear()
        self._made_draft = None
        self.measure_button.hide()
        source, out, settings = self.form.source(), self.form.out_folder(), self.form.settings()
        assert out is not None
        hub = self._hub
        if source.folder is not None:
            folder = source.folder
            self._run_step("checking", "Checking…", lambda: _plans(folder, out, settings, trust))
        else:
            repo_id = str(source.repo_id)
            self._run_step(
                "fetching",
                f"Fetching {repo_id}'s config.json, then its model files, from {hub.place()}…",
                lambda: _plans(
                    source_folder(repo_id, hub, None, trust, settings), out, settings, trust
                ),
            )

    def _run_step(self, step: str, words: str, fn: Callable[[], Plans]) -> None:
        self._set_step(step, words)
        background.run(self, "step", fn, on_done=self._with_plans, on_error=self._on_step_error)

    def _on_step_error(self, error: Exception) -> None:
        if isinstance(error, CustomCodeRefused) and not self._trust:
            self._ask_trust(error)
        elif isinstance(error, ExportRefused) and error.block is not None:
            self._refused_block(error, error.block)
        else:
            self._failed(error)

    def _refused_block(self, refused: ExportRefused, block: int) -> None:
        """A repo's config.json refused the block before its weights were fetched: the
        refusal and the block that fits are offered as for a folder."""
        settings = replace(self.form.settings(), block=block)
        self._stopped("Not started: only the model's config.json was fetched.", problem=True)
        self._show_check(
            Check(refusal=refused.message, adjusted=settings, adjust_words=(refused.message,))
        )

    def _ask_trust(self, refused: CustomCodeRefused) -> None:
        """Name the folder's code and ask; No (the default) runs none of it."""
        self._set_step("asking", "The model folder carries code of its own.")
        found = "\n".join(f"• {what}" for what in refused.found)
        choose(
            self,
            "Run the model folder's own code?",
            f"{refused.folder} carries code of its own:\n{found}\n\nExporting and verifying "
            "it runs that code on this computer with your rights. Say yes only if you trust "
            "where the folder came from.",
            [("Trust It and Export", self._trusted)],
            on_cancel=lambda: self._stopped("Not started: the folder's code was not trusted."),
        )

    def _trusted(self) -> None:
        self._step = ""
        self._begin(trust=True)

    def _set_step(self, step: str, words: str) -> None:
        self._step = step
        self.say(words)
        self._update_buttons()

    def _with_plans(self, plans: Plans) -> None:
        plan, env_plan = plans
        if env_plan.ready:
            self._export(ExportEnv(env_plan.folder), plan)
        elif not env_plan.fits():
            self._failed(
                OSError(f"Not enough free space for the export environment. {env_plan.describe()}")
            )
        else:
            self._set_step("asking", "Exporting needs its own Python environment first.")
            again = bool(env_plan.damaged)
            choose(
                self,
                "Make the export environment again?" if again else "Create the export environment?",
                env_plan.describe()
                + ("\n\nMake it again now?" if again else "\n\nCreate it now?")
                + " It is made once and kept.",
                [
                    (
                        "Make It Again" if again else "Create It",
                        lambda: self._build_env(plan, env_plan),
                    )
                ],
                on_cancel=lambda: self._stopped("Not started: nothing was downloaded."),
            )

    def _lane(self) -> JobQueue[ExportEnvJob | ExportJob]:
        if self._queue is None:
            self._queue = JobQueue(1, "make-pack")
            background.watch(self, self._queue, self._on_job_changed)
        return self._queue

    def _build_env(self, plan: ExportPlan, env_plan: ExportEnvPlan) -> None:
        self._set_step("building", f"Creating the export environment in {env_plan.folder}…")
        self._after_env = plan
        self._job = ExportEnvJob(env_plan)
        self._lane().submit(self._job)

    def _export(self, env: ExportEnv, plan: ExportPlan) -> None:
        self._set_step("exporting", f"Exporting {plan.source.folder.name} to {plan.out}…")
        self._job = ExportJob(env, plan)
        self._lane().submit(self._job)

    def _on_job_changed(self) -> None:
        job = self._job
        if job is None:
            return
        status = job.status()
        line = plain_line(status.line)  # the exporter's emoji would be boxes
        progress = status.progress if isinstance(status, ExportStatus) else None
        if progress is not None and progress.stage:
            self.show_progress(round(progress.done * 100), progress.stages * 100)
            said = "" if line == progress.name else f": {line}"
            self.say(f"Exporting, {progress.words()}{said}")
        elif line:
            self.say(f"{status.state}: {line}")
        if not job.is_finished():
            return
        self._job = None
        if status.state == export_run.CANCELLED:  # the same word in both jobs
            self._stopped(f"Cancelled while {self._step}: nothing was kept.")
        elif status.state != export_run.DONE:
            self._failed(RuntimeError(status.error or f"{self._step} failed"))
        elif isinstance(job, ExportEnvJob) and self._after_env is not None:
            self._export(job.env(), self._after_env)
        elif isinstance(job, ExportJob):
            self._verify_pack(job)

    def _verify_pack(self, job: ExportJob) -> None:
        """Verify the export in its partial folder: it moves into place with the outcome."""
        plan = job.plan
        self._verifying = job
        self._verifying_draft = plan.settings.role == "draft"
        self._set_step("verifying", f"Verifying {plan.out.name} against its source…")
        self.bar.setRange(0, 0)  # the export's stages are over: busy again
        self._verify.start(
            job.env, job.partial, plan.source.folder, plan.trust_remote_code, plan.out
        )

    def _on_verify_progress(self, line: str) -> None:
        if self._step == "verifying":
            self.say(f"verifying: {plain_line(line)}")

    def _on_verified(self, _partial: Path, figures: str, problem: str, verified: bool) -> None:
        job, self._verifying = self._verifying, None
        if job is None:
            return
        self.figures.setHtml(figures)
        self._set_step("placing", f"Putting {job.plan.out.name} in place…")
        background.run(
            self,
            "place",
            job.place,
            on_done=lambda pack: self._placed(pack, problem, verified),
            on_error=self._failed,
        )

    def _placed(self, pack: Path, problem: str, verified: bool) -> None:
        if not verified:
            self._stopped(
                f"Export not verified: {pack.name} was not added to the Library (it is in "
                f"{pack}; File → Add Folder… adds it anyway). {problem}".strip(),
                problem=True,
            )
            return
        self._add_to_library(pack, problem)

    def _add_to_library(self, pack: Path, card_problem: str) -> None:
        try:
            self._library.add_folder(pack)
        except AlreadyExistsError:
            pass  # made inside the library folder, or made again: it is listed already
        except FileError as exc:
            self._stopped(f"The pack was made but not added: {problem_words(exc)}", True)
            return
        draft = self._verifying_draft
        next_step = (
            "Measure… measures it against targets and writes its runtime_config.json"
            if draft
            else "File → Publish to Hugging Face… puts it on the Hub"
        )
        self._stopped(
            f"Export verified. {pack.name} is in the Library ({pack}): pair it, chat, tune "
            f"or push it there; {next_step}. " + card_problem,
            problem=bool(card_problem),
        )
        if draft:
            self._made_draft = pack
            self.measure_button.show()
        self.made.emit(pack)

    def _measure(self) -> None:
        if self._made_draft is not None:
            self.measure_requested.emit(self._made_draft)

    def _failed(self, error: Exception) -> None:
        log.warning("make pack: %s failed: %s", self._step or "a step", error)
        self._stopped(problem_words(error), problem=True)

    def _stopped(self, words: str, problem: bool = False) -> None:
        self._step = ""
        self.say(words, problem)
        self._update_buttons()

    # -- stopping ---------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running step: a job is killed with its children, a fetch or check
        is left to end unheard."""
        if not self.running():
            return
        if self._job is not None:
            self.say(f"Cancelling ({self._step})…")
            self._job.cancel()
        elif self._step == "placing":
            return  # a move of a finished pack, over in a moment
        elif self._step == "verifying":
            self.say("Cancelling (verifying)…")
            self._verify.cancel()
        else:
            background.drop(self, "step")
            self._stopped(f"Cancelled while {self._step}.")

    def shutdown(self) -> None:
        self._verify.cancel()
        if self._queue is not None:
            # Pauses (cancels: kills the exporter's processes), then waits a little.
            self._queue.shutdown(timeout=2.0)
            self._queue = None


def _plans(folder: Path, out: Path, settings: ExportSettings, trust: bool) -> Plans:
    return plan_export(folder, out, settings, trust_remote_code=trust), plan_export_env()
