"""The Chat page: a local speculative-decoding chat with live figures and charts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.settings import Settings
from app.core.measure.chat_record import ChatRecord, PairRecipes, chat_record
from app.core.measure.conversations import ConversationStore
from app.core.measure.verify_agreement import VerifyAgreement
from app.engine.protocol import Load, Mode
from app.ui.base.dialogs import show_error
from app.ui.base.engine_bridge import GENERATING, READY, EngineBridge, EngineState
from app.ui.base.labels import wrap_to_width
from app.ui.base.no_pair import NeedsPair
from app.ui.base.pair_selection import PairSelection
from app.ui.base.pair_state import Pair, PairState
from app.ui.chat.chat_charts import ChatCharts
from app.ui.chat.chat_context import ChatContext
from app.ui.chat.chat_conversations import ConversationPanel, Conversations
from app.ui.chat.chat_drafting import DraftingSwitch
from app.ui.chat.chat_export import ChatExport
from app.ui.chat.chat_forecast import ChatForecast
from app.ui.chat.chat_header import (
    StateLabel,
    crash_title,
    pair_line,
    pair_tip,
)
from app.ui.chat.chat_input import MessageInput
from app.ui.chat.chat_mode import ModeChoice
from app.ui.chat.chat_notes import NotesStrip
from app.ui.chat.chat_opening import ConversationOpening
from app.ui.chat.chat_replies import ChatReplies
from app.ui.chat.chat_sampling import SamplerControls
from app.ui.chat.chat_transcript import Transcript
from app.ui.chat.chat_turns import TurnMarkersNote


class ChatPage(QWidget):
    def __init__(
        self,
        selection: PairSelection,
        bridge: EngineBridge,  # built once by the window: what is known of the pair
        parent: QWidget | None = None,
        store: ConversationStore | None = None,
        settings: Settings | None = None,  # where exports went last is kept in them
    ) -> None:
        super().__init__(parent)
        self.selection = selection
        self.bridge = bridge
        self.opening = ConversationOpening(self)  # which conversation is on screen

        title = QLabel("Chat")
        title.setObjectName("pageTitle")
        self.pair_label = QLabel()
        self.pair_label.setObjectName("pageHint")
        wrap_to_width(self.pair_label)
        self.state_label = StateLabel()
        self.restart_button = QPushButton("Restart Engine")
        self.restart_button.hide()
        self.mode_choice = ModeChoice(lambda: self.bridge.pair_state)
        self.mode, self.mode_note = self.mode_choice.combo, self.mode_choice.note
        self.chat_note = QLabel()  # what happened to the conversation (a new pair)
        self.chat_note.setObjectName("pageHint")
        wrap_to_width(self.chat_note)
        self.chat_note.hide()
        self.notes = NotesStrip(self.mode_note, self.chat_note)
        self.turns = TurnMarkersNote(self._reload_pair)  # a target whose turns are unmarked
        self.sampling = SamplerControls()  # per request: switching never reloads the pair
        self.highlight = QCheckBox("Highlight drafts")
        self.highlight.setChecked(True)
        self.highlight.setToolTip(
            "Tokens the target accepted from the draft get a yellow background"
        )
        self.drafting = DraftingSwitch(self.say)
        self.adaptive = self.drafting.box
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 32768)
        self.max_tokens.setValue(512)
        self.max_tokens.setSuffix(" tokens max")

        self.transcript = Transcript()
        self.input = MessageInput()
        self.send_keys = self.input.send_keys
        self.send_button = QPushButton("Send")
        self.stop_button = QPushButton("Stop")
        self.new_button = QPushButton("New Chat")
        self.export_button = QPushButton("Export")
        self.save_charts_button = QPushButton("Save Charts")
        self.charts = ChatCharts()
        self.panel = ConversationPanel(store or ConversationStore())
        self.conversations = Conversations(self.panel)
        self.exporter = ChatExport(self, self.run_record, self.charts, self.say, settings)
        self.context = ChatContext(self)  # the window's meter, a long prompt's reading
        self.phone_forecast = ChatForecast(self)  # the line under each reply
        self.replies = ChatReplies(self)

        header = QHBoxLayout()
        header.addWidget(title)
        header.addSpacing(12)
        header.addWidget(self.state_label)
        header.addWidget(self.restart_button)
        header.addStretch(1)
        header.addWidget(self.adaptive)  # the options row is full at 1024 px
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
        left_layout.addWidget(self.context.meter)
        left_layout.addWidget(self.context.prefill)
        left_layout.addWidget(self.input)
        left_layout.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        for pane, stretch in ((self.panel, 0), (left, 3), (self.charts, 2)):
            splitter.addWidget(pane)
            splitter.setStretchFactor(splitter.count() - 1, stretch)
        splitter.setSizes([150, 520, 330])
        body = QWidget()  # what a chosen pair brings: without one, NeedsPair's notice
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self.pair_label)
        body_layout.addLayout(options)
        body_layout.addWidget(self.sampling.note)  # always shown: it never moves the page
        body_layout.addWidget(self.notes)
        body_layout.addWidget(self.turns)
        body_layout.addWidget(splitter, 1)
        self.needs_pair = NeedsPair(selection, body, "to chat with it")
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.state_label.reason)
        layout.addWidget(self.needs_pair, 1)

        self.send_button.clicked.connect(self.send)
        self.input.send_requested.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        self.new_button.clicked.connect(self._on_new_chat_clicked)
        self.restart_button.clicked.connect(self.restart)
        self.highlight.toggled.connect(self.transcript.set_highlight)
        self.export_button.clicked.connect(self.exporter.export)
        self.save_charts_button.clicked.connect(self.exporter.save_charts)
        self.mode.currentIndexChanged.connect(self._on_mode_changed)
        self.panel.open_requested.connect(self.opening.open)
        self.panel.deleted.connect(self.opening.on_deleted)
        self.transcript.regenerate_requested.connect(self.regenerate)
        self.transcript.copied.connect(self.say)
        self.bridge.state_changed.connect(self._on_state)
        self.bridge.pair_changed.connect(self.show_pair_state)
        self.bridge.crashed.connect(self._on_crashed)
        self.bridge.reloading.connect(self._on_reloading)
        selection.changed.connect(self._on_pair_changed)
        self._on_state(self.bridge.state)

    # The pair's facts are the bridge's snapshot, read where needed, never copied.
    @property
    def loaded_pair(self) -> Pair:
        return self.bridge.pair_state.pair

    @property
    def last_error(self) -> str:
        return self.bridge.pair_state.error

    @property
    def verify_agreement(self) -> VerifyAgreement | None:
        return self.bridge.pair_state.agreement

    # -- engine lifecycle -----------------------------------------------------------------

    def load_pair(self) -> None:
        target, draft = self.selection.target, self.selection.draft
        if target is None or draft is None:
            return  # NeedsPair says what to do
        mode_words = self.mode_choice.new_pair((target, draft))
        if mode_words:
            said = self.chat_note.text() if not self.chat_note.isHidden() else ""
            self.say(f"{said} {mode_words}".strip())
        self.context.new_pair()
        self.conversations.start(target, draft)
        self.sampling.read_recipe(target)
        self.drafting.read(draft)
        self._load(target, draft)

    def _load(self, target: Path, draft: Path) -> None:
        # The bridge plans the load: a pair that cannot work together is known at once,
        # so in Plain its target alone is the one load the engine is asked for.
        plain = self.mode_choice.name == Mode.PLAIN
        self.bridge.load(Load(target=str(target), draft=str(draft)), alone_if_blocked=plain)

    def _on_mode_changed(self) -> None:
        # A blocked pair: Plain loads the target alone, Speculative asks for the pair
        # again (and says again why it cannot run).
        self.context.show_window()  # Plain's is the target's alone
        self.adaptive.setEnabled(self.mode_choice.name != Mode.PLAIN)  # nothing drafts then
        state = self.bridge.pair_state
        target, draft = state.pair
        if state.blocked and target and draft and self.bridge.state != GENERATING:
            self._load(target, draft)

    def show_pair_state(self, state: PairState) -> None:
        """Render the bridge's latest snapshot: the pair line, the mode and the header."""
        if state.target is not None and state.draft is not None:
            self.pair_label.setText(pair_line(state))
            self.pair_label.setToolTip(pair_tip(state))
        self.mode_choice.show(state)
        self.turns.show_for(state)
        self._on_state(self.bridge.state)

    def _reload_pair(self) -> None:
        target, draft = self.loaded_pair
        if target is not None and draft is not None:
            self._load(target, draft)

    def _on_pair_changed(self) -> None:
        if self.isVisible():
            self.reload_if_pair_changed()

    def reload_if_pair_changed(self) -> None:
        """Load the selected pair, but never under a reply that is still being written:
        that waits for the reply to finish. A new pair starts a new chat."""
        if self.bridge.state == GENERATING:
            return
        if (self.selection.target, self.selection.draft) != self.loaded_pair:
            if self.loaded_pair != (None, None) and self.selection.target is not None:
                kept = bool(self.transcript.messages)
                self.new_chat(reset_engine=False)
                self.charts.set_reference(None)  # the plain speed of the old pair
                name = self.selection.target.name
                # The list shows this pair's conversations only, unless All pairs.
                where = (
                    " in the list"
                    if self.panel.all_pairs.isChecked()
                    else ": tick All pairs to see it"
                )
                self.chat_note.setText(
                    f"New pair: a new conversation with {name}; the previous one is kept{where}."
                    if kept
                    else f"New pair: a new conversation with {name}."
                )
                self.chat_note.show()
            self.load_pair()

    def showEvent(self, event: QShowEvent) -> None:
        self.reload_if_pair_changed()
        # The recipes may have been saved meanwhile: the next reply reads the sampler
        # again, and a load-time key loads the pair again now (the meter shows its window).
        self.bridge.reload_if_recipes_changed()
        self.sampling.read_recipe(self.loaded_pair[0])
        self.panel.refresh()  # another window may have saved conversations meanwhile
        super().showEvent(event)

    def restart(self) -> None:
        self.restart_button.hide()
        self.bridge.restart()

    # -- chatting --------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Esc anywhere on the page (it bubbles up from the text views) stops generating.
        if event.key() == Qt.Key.Key_Escape:
            self.stop()
            return
        super().keyPressEvent(event)

    def send(self) -> None:
        self.replies.send()

    def regenerate(self) -> None:
        self.replies.regenerate()

    def reply(self) -> None:
        self.replies.reply()

    def stop(self) -> None:
        self.bridge.stop()

    def _on_new_chat_clicked(self) -> None:
        self.new_chat()

    def new_chat(self, reset_engine: bool = True) -> None:
        if self.bridge.state == GENERATING:
            self.bridge.stop()
        self.mode_choice.leave_held()  # a read-only conversation's mode leaves with it
        self.opening.reading = None
        self.transcript.clear_chat()
        self.charts.clear()
        self.context.clear()
        self.chat_note.hide()
        self.update_actions()
        self.conversations.start(*self.loaded_pair)  # the old one stays listed
        if reset_engine:
            self.bridge.reset()

    def _on_reloading(self, keys: list[str]) -> None:
        self.say(f"Recipe saved ({', '.join(keys)}): the pair loads again, and replies use it.")

    def _on_crashed(self, message: str) -> None:
        self.restart_button.show()
        show_error(
            self,
            crash_title(self.bridge.pair_state.crash_code),
            f"{message}\n\nThe conversation is kept. Press Restart Engine to go on.",
        )

    def _on_state(self, state: EngineState) -> None:
        known = self.bridge.pair_state
        self.state_label.show_state(state, known.error, known.crash_code)
        self.update_actions()

    def update_actions(self) -> None:
        state = self.bridge.state
        self.send_button.setEnabled(state == READY and self.opening.reading is None)
        self.stop_button.setEnabled(state == GENERATING)
        self.turns.apply_button.setEnabled(state == READY)  # never a reload under a reply
        self.panel.set_busy(state == GENERATING)

    # -- export ------------------------------------------------------------------------------

    def run_record(self) -> ChatRecord:
        """The chat on screen, with the pair and recipes its replies were made with: a
        read-only conversation's as it recorded them, never the pair loaded now."""
        reading = self.opening.reading
        held = self.conversations.current if reading is None else reading
        target, draft = self.loaded_pair
        if reading is not None:
            target = Path(reading.target) if reading.target else None
            draft = Path(reading.draft) if reading.draft else None
        record = chat_record(
            target,
            draft,
            (m.record() for m in self.transcript.messages),
            self.charts.per_position(),
            self.charts.reference_tok_s,
            self.verify_agreement if reading is None else None,  # of the loaded pair
        )
        if held is not None and held.recipes is not None:
            record = replace(record, recipes=PairRecipes.from_json(held.recipes))
        elif reading is not None:  # saved before recipes were recorded
            record = replace(record, recipes=None)
        if reading is not None and target is None:
            record = replace(record, pair_recorded=False)
        return record

    def say(self, text: str) -> None:
        """What happened to the conversation, on the line above it."""
        self.chat_note.setText(text)
        self.chat_note.show()

    def export_json(self, path: Path) -> None:
        self.exporter.write(path, markdown=False)

    def export_markdown(self, path: Path) -> None:
        self.exporter.write(path, markdown=True)
