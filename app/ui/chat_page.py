"""The Chat page: a local speculative-decoding chat with live figures and charts."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.measure.chat_record import ChatRecord, chat_record
from app.core.measure.verify_agreement import VerifyAgreement
from app.engine.protocol import (
    AgreementMeasured,
    ChatTurn,
    Done,
    Generate,
    Load,
    Loaded,
    Rounds,
)
from app.ui.chat_charts import ChatCharts
from app.ui.chat_header import (
    EXACT_ROLLBACK_NOTE,
    PLAIN_DEFAULT_TIP,
    crash_title,
    pair_line,
    plain_default_note,
    state_html,
)
from app.ui.chat_sampling import SamplerControls
from app.ui.chat_transcript import Transcript
from app.ui.dialogs import show_error
from app.ui.engine_bridge import CRASHED, GENERATING, READY, EngineBridge
from app.ui.pair_selection import PairSelection

SEND_KEYS = ("Enter sends", "Ctrl+Enter sends")
MODES = ("speculative", "plain")  # the mode combo's items, in order


class ChatPage(QWidget):
    def __init__(
        self,
        selection: PairSelection,
        bridge: EngineBridge | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.selection = selection
        self.bridge = bridge or EngineBridge()
        self._loaded_pair: tuple[Path | None, Path | None] = (None, None)
        self.last_error = ""
        self.verify_agreement: VerifyAgreement | None = None  # of the loaded pair
        self.memory_warning = ""  # the engine's word when the pair barely fits in RAM

        title = QLabel("Chat")
        title.setObjectName("pageTitle")
        self.pair_label = QLabel()
        self.pair_label.setObjectName("pageHint")
        self.pair_label.setWordWrap(True)
        self.state_label = QLabel()
        self.restart_button = QPushButton("Restart Engine")
        self.restart_button.hide()
        self.mode = QComboBox()
        self.mode.addItems(["Speculative", "Plain"])
        self.mode.setToolTip(
            "Speculative: target + draft. Plain: the target alone, to compare "
            "on the same conversation"
        )
        # Why the mode combo switched to Plain by itself (a pair that cannot gain).
        self.mode_note = QLabel()
        self.mode_note.setObjectName("pageHint")
        self.mode_note.hide()
        # The pair the mode was switched to Plain for (a replayed load keeps the choice).
        self._plain_for: tuple[Path | None, Path | None] | None = None
        self.sampling = SamplerControls()  # per request: switching never reloads the pair
        self.highlight = QCheckBox("Highlight drafts")
        self.highlight.setChecked(True)
        self.highlight.setToolTip(
            "Tokens the target accepted from the draft get a yellow background"
        )
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 32768)
        self.max_tokens.setValue(512)
        self.max_tokens.setSuffix(" tokens max")
        self.send_keys = QComboBox()
        self.send_keys.addItems(SEND_KEYS)
        self.send_keys.setToolTip("With Enter sends, Shift+Enter starts a new line")
        self.send_keys.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.send_keys.setMinimumContentsLength(12)

        self.transcript = Transcript()
        self.input = QPlainTextEdit()
        self.input.setPlaceholderText("Write a message…")
        self.input.setMaximumHeight(110)
        self.input.installEventFilter(self)
        self.send_button = QPushButton("Send")
        self.stop_button = QPushButton("Stop")
        self.new_button = QPushButton("New Chat")
        self.export_button = QPushButton("Export")
        self.save_charts_button = QPushButton("Save Charts")
        self.charts = ChatCharts()

        header = QHBoxLayout()
        header.addWidget(title)
        header.addSpacing(12)
        header.addWidget(self.state_label)
        header.addWidget(self.restart_button)
        header.addStretch(1)
        options = QHBoxLayout()
        for widget in (self.mode, self.sampling, self.highlight, self.max_tokens, self.send_keys):
            options.addWidget(widget)
        options.addStretch(1)
        buttons = QHBoxLayout()
        for button in (self.send_button, self.stop_button, self.new_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.save_charts_button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.transcript, 1)
        left_layout.addWidget(self.input)
        left_layout.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.charts)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.pair_label)
        layout.addLayout(options)
        layout.addWidget(self.sampling.note)
        layout.addWidget(self.mode_note)
        layout.addWidget(splitter, 1)

        self.send_button.clicked.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        self.new_button.clicked.connect(self._on_new_chat_clicked)
        self.restart_button.clicked.connect(self.restart)
        self.highlight.toggled.connect(self.transcript.set_highlight)
        self.export_button.clicked.connect(self._on_export)
        self.save_charts_button.clicked.connect(self._on_save_charts)
        self.bridge.state_changed.connect(self._on_state)
        self.bridge.rounds.connect(self._on_rounds)
        self.bridge.finished.connect(self._on_finished)
        self.bridge.failed.connect(self._on_failed)
        self.bridge.crashed.connect(self._on_crashed)
        self.bridge.loaded.connect(self._on_loaded)
        self.bridge.agreement.connect(self._on_agreement)
        self.bridge.agreement_started.connect(self._show_pair)
        selection.changed.connect(self._on_pair_changed)
        self._on_state(self.bridge.state)

    # -- engine lifecycle -----------------------------------------------------------------

    def load_pair(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        if target is None or draft is None:
            self.pair_label.setText("Choose a target and a draft on the Pair page first.")
            return
        self._loaded_pair = (target, draft)
        self.verify_agreement = None
        self.memory_warning = ""
        self._show_pair()
        self.sampling.read_recipe(target)
        self.bridge.load(Load(target=str(target), draft=str(draft)))

    def _show_pair(self) -> None:
        target, draft = self._loaded_pair
        if target is None or draft is None:
            return
        found = self.verify_agreement
        self.pair_label.setText(
            pair_line(
                target,
                draft,
                found,
                measuring=self.bridge.agreement_id is not None,
                waits_for_reply=self.bridge.agreement_waits_for_reply,
                memory_warning=self.memory_warning,
            )
        )
        self.pair_label.setToolTip(found.sentence() if found else "")

    def _on_pair_changed(self) -> None:
        if self.isVisible():
            self._reload_if_pair_changed()

    def _reload_if_pair_changed(self) -> None:
        """Load the selected pair, but never under a reply that is still being written:
        that waits for the reply to finish. A new pair starts a new chat."""
        if self.bridge.state == GENERATING:
            return
        if (self.selection.target, self.selection.draft) != self._loaded_pair:
            if self._loaded_pair != (None, None):
                self.new_chat(reset_engine=False)
            self.load_pair()

    def showEvent(self, event: QShowEvent) -> None:
        self._reload_if_pair_changed()
        self.sampling.read_recipe(self._loaded_pair[0])  # the recipe may have been edited
        super().showEvent(event)

    def restart(self) -> None:
        self.restart_button.hide()
        self.bridge.restart()

    def shutdown(self) -> None:
        self.bridge.shutdown()

    # -- chatting --------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
                shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                enter_sends = self.send_keys.currentIndex() == 0
                if (enter_sends and not shift and not ctrl) or (not enter_sends and ctrl):
                    self.send()
                    return True
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Esc anywhere on the page (it bubbles up from the text views) stops generating.
        if event.key() == Qt.Key.Key_Escape:
            self.stop()
            return
        super().keyPressEvent(event)

    def conversation(self) -> tuple[ChatTurn, ...]:
        return tuple(ChatTurn(m.role, m.text) for m in self.transcript.messages)

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.bridge.state != READY:
            return
        self.input.clear()
        self.transcript.add_user(text)
        mode = "speculative" if self.mode.currentIndex() == 0 else "plain"
        self.transcript.start_assistant(mode)
        self.charts.start_reply()
        self.bridge.generate(
            Generate(
                messages=self.conversation()[:-1],
                mode=mode,
                max_tokens=self.max_tokens.value(),
                sampler=self.sampling.sampler(),
                seed=self.sampling.seed(),
            )
        )
        self._show_pair()  # a pending agreement check now waits for this reply

    def stop(self) -> None:
        self.bridge.stop()

    def _on_new_chat_clicked(self) -> None:
        self.new_chat()

    def new_chat(self, reset_engine: bool = True) -> None:
        if self.bridge.state == GENERATING:
            self.bridge.stop()
        self.transcript.clear_chat()
        self.charts.clear()
        if reset_engine:
            self.bridge.reset()

    def _on_rounds(self, event: Rounds) -> None:
        self.transcript.add_pieces(event.pieces, event.from_draft)
        self.charts.add_rounds(event)

    def _on_finished(self, event: Done) -> None:
        stats = event.stats
        figures = stats.to_json()
        if stats.mode == "speculative" and self.verify_agreement is not None:
            figures["verify_agreement"] = self.verify_agreement.to_json()
        self.transcript.finish(figures, event.stopped_by)
        self.charts.finish_reply(stats.tok_s)
        if stats.mode == "plain" and stats.tok_s:
            self.charts.set_reference(stats.tok_s)
        if self.isVisible():
            self._reload_if_pair_changed()

    def _on_loaded(self, event: Loaded) -> None:
        self.last_error = ""
        self.memory_warning = event.memory_warning or ""
        self._show_pair()
        self._default_mode(event)

    def _default_mode(self, event: Loaded) -> None:
        """Plain decoding for a pair that cannot gain on this MNN (the engine's probe
        says so in the load event), with the reason in one line; the user may still
        pick Speculative. The next pair that can gain gets Speculative back."""
        reason = event.cannot_pay
        if reason:
            if self._plain_for != self._loaded_pair:
                self.mode.setCurrentIndex(MODES.index("plain"))
                self._plain_for = self._loaded_pair
            self.mode_note.setText(plain_default_note(reason))
            self.mode_note.setToolTip(PLAIN_DEFAULT_TIP)
            self.mode_note.show()
            return
        if self._plain_for is not None:
            self.mode.setCurrentIndex(MODES.index("speculative"))
            self._plain_for = None
        if event.linear_rollback:
            self.mode_note.setText(EXACT_ROLLBACK_NOTE)
            self.mode_note.setToolTip("")
            self.mode_note.show()
        else:
            self.mode_note.hide()

    def _on_agreement(self, event: AgreementMeasured | None) -> None:
        self.verify_agreement = event.result if event is not None else None
        self._show_pair()

    def _on_failed(self, code: str, message: str) -> None:
        self.last_error = message
        self._on_state(self.bridge.state)
        if (
            self.transcript.messages
            and self.transcript.messages[-1].role == "assistant"
            and self.transcript.messages[-1].stats is None
        ):
            self.transcript.finish({}, "error")

    def _on_crashed(self, message: str) -> None:
        self.last_error = message
        self.restart_button.show()
        self._on_state(CRASHED)
        show_error(
            self,
            crash_title(self.bridge.crash_code),
            f"{message}\n\nThe conversation is kept. Press Restart Engine to go on.",
        )

    def _on_state(self, state: str) -> None:
        self.state_label.setText(state_html(state, self.last_error, self.bridge.crash_code))
        self.state_label.setToolTip(self.last_error)
        self.send_button.setEnabled(state == READY)
        self.stop_button.setEnabled(state == GENERATING)

    # -- export ------------------------------------------------------------------------------

    def run_record(self) -> ChatRecord:
        target, draft = self._loaded_pair
        return chat_record(
            target,
            draft,
            (m.record() for m in self.transcript.messages),
            self.charts.per_position(),
            self.charts.reference_tok_s,
            self.verify_agreement,
        )

    def export_json(self, path: Path) -> None:
        self.run_record().write_json(path)

    def export_markdown(self, path: Path) -> None:
        self.run_record().write_markdown(path)

    def _on_export(self) -> None:
        name, chosen = QFileDialog.getSaveFileName(
            self, "Export chat", "chat.json", "JSON (*.json);;Markdown (*.md)"
        )
        if not name:
            return
        try:
            if name.endswith(".md") or "Markdown" in chosen:
                self.export_markdown(Path(name))
            else:
                self.export_json(Path(name))
        except OSError as exc:
            show_error(self, "Export failed", f"{name}: {exc}")

    def _on_save_charts(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Save charts", "charts.png", "PNG (*.png)")
        if name and not self.charts.save_png(name):
            show_error(self, "Could not save the charts", name)
