"""The Make Pack dialog's choices: the source (an HF folder or a repo id), the output
folder, bits, block and role, and what the checks say about them before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from app.core.hub.plan import check_repo_id
from app.core.infra.errors import DraftDeckError
from app.core.packmaking.custom_code import CustomCodeRefused
from app.core.packmaking.export_checks import (
    BITS,
    ROLES,
    ExportPlan,
    ExportRefused,
    ExportSettings,
    check_settings,
    plan_export,
    read_source,
)
from app.ui.base.labels import wrap_to_width
from app.ui.base.suggested_edit import SuggestedEdit
from app.ui.packmaking.job_dialog import folder_row, say_in

BLOCKS = (0, 32, 64, 128, 256)  # 0: one block per row, llmexport's "channel-wise"
OUT_SUFFIX = "-MNN"  # the suggested output folder: beside the source, as Hub repos name it


@dataclass(frozen=True)
class Source:
    """What the user named: a local HF folder, or a Hub repo id (checked once fetched)."""

    folder: Path | None = None
    repo_id: str | None = None
    problem: str = ""


def read_choice(text: str) -> Source:
    text = text.strip()
    if not text:
        return Source(problem="Choose a Hugging Face model folder, or type its repo id.")
    path = Path(text).expanduser()
    if path.is_dir():
        return Source(folder=path)
    try:
        check_repo_id(text)
    except DraftDeckError:
        return Source(problem=f"{text}: no such folder here, and not an owner/name repo id.")
    return Source(repo_id=text)


@dataclass(frozen=True)
class Check:
    """What the checks said: a plan ready to run, or why not and the settings that fit."""

    plan: ExportPlan | None = None
    refusal: str = ""
    adjusted: ExportSettings | None = None  # settings the checks would change it to
    adjust_words: tuple[str, ...] = ()
    code: tuple[str, ...] = ()  # the folder's own code: Start asks before running it


def check_choice(folder: Path, out: Path, settings: ExportSettings) -> Check:
    """The export checks (export_checks.plan_export); on a refusal, the adjustment the
    checks know, if any. Runs off the GUI thread: it reads the source's files."""
    try:
        return Check(plan=plan_export(folder, out, settings))
    except CustomCodeRefused as refused:  # every other check passed
        return Check(
            refusal=f"{refused.message}. Start asks before it runs any.", code=refused.found
        )
    except ExportRefused as refused:
        refusal = str(refused)
    try:
        adjusted, words = check_settings(read_source(folder), settings, adjust=True)
    except ExportRefused:
        return Check(refusal=refusal)
    if adjusted == settings:
        return Check(refusal=refusal)
    return Check(refusal=refusal, adjusted=adjusted, adjust_words=words)


def describe_plan(plan: ExportPlan) -> str:
    s, src = plan.settings, plan.source
    block = "one block per row" if s.block == 0 else f"block {s.block}"
    return (
        f"{src.model_type} ({src.architecture}, hidden {src.hidden_size}) as a "
        f"{s.bits}-bit {s.role} pack, {block}, into {plan.out}."
    )


class MakePackForm(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText("a Hugging Face model folder, or owner/name")
        self.out_edit = SuggestedEdit()  # `<model>-MNN` until the user chooses
        self.out_edit.setPlaceholderText("where the pack is made (a new or empty folder)")
        self.bits_box = QComboBox()  # only the bits the exporter writes
        for bits in BITS:
            self.bits_box.addItem(f"{bits} bits", bits)
        self.bits_box.setCurrentIndex(BITS.index(ExportSettings().bits))
        self.block_box = QComboBox()
        for block in BLOCKS:
            self.block_box.addItem("one per row" if block == 0 else str(block), block)
        self.block_box.setCurrentIndex(BLOCKS.index(ExportSettings().block))
        self.role_box = QComboBox()
        for role in ROLES:
            self.role_box.addItem(role, role)
        self.role_box.setToolTip(
            "A draft pack gets a draft recipe (config_cpu.json); a target pack does not"
        )
        self.check_label = wrap_to_width(QLabel())
        self.adjust_button = QPushButton("Adjust")
        self.adjust_button.setAutoDefault(False)
        self.adjust_button.hide()

        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Model:", folder_row(self.source_edit, "The Hugging Face model folder"))
        form.addRow("Output folder:", folder_row(self.out_edit, "Make the pack in"))
        form.addRow("Quantization:", self.bits_box)
        form.addRow("Block:", self.block_box)
        form.addRow("Role:", self.role_box)
        check_row = QHBoxLayout()
        check_row.addWidget(self.check_label, 1)
        check_row.addWidget(self.adjust_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("Checks:", check_row)
        self.source_edit.textChanged.connect(self._on_source_changed)
        self.out_edit.textChanged.connect(self.changed)
        self.bits_box.currentIndexChanged.connect(self.changed)
        self.block_box.currentIndexChanged.connect(self.changed)
        self.role_box.currentIndexChanged.connect(self.changed)

    def source(self) -> Source:
        return read_choice(self.source_edit.text())

    def out_folder(self) -> Path | None:
        text = self.out_edit.text().strip()
        return Path(text).expanduser() if text else None

    def settings(self) -> ExportSettings:
        return ExportSettings(
            bits=int(self.bits_box.currentData()),
            block=int(self.block_box.currentData()),
            role=str(self.role_box.currentData()),
        )

    def set_settings(self, settings: ExportSettings) -> None:
        if (bits := self.bits_box.findData(settings.bits)) >= 0:  # only bits it offers
            self.bits_box.setCurrentIndex(bits)
        index = self.block_box.findData(settings.block)
        if index < 0:  # a block the list does not offer: added, so it can be shown
            self.block_box.addItem(str(settings.block), settings.block)
            index = self.block_box.count() - 1
        self.block_box.setCurrentIndex(index)
        self.role_box.setCurrentIndex(max(self.role_box.findData(settings.role), 0))

    def say(self, text: str, problem: bool = False) -> None:
        say_in(self.check_label, text, problem)

    def set_running(self, running: bool) -> None:
        for widget in self.findChildren(QWidget):
            if widget is not self.check_label:
                widget.setEnabled(not running)

    def _on_source_changed(self, text: str) -> None:
        """Suggest `<source>-MNN` beside a source folder (kept while the user has not
        chosen an output folder of their own)."""
        source = read_choice(text)
        folder = source.folder.resolve() if source.folder is not None else None
        self.out_edit.suggest(
            str(folder.with_name(folder.name + OUT_SUFFIX)) if folder and folder.name else ""
        )
        self.changed.emit()
