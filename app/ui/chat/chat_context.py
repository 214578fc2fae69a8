"""How much of the context window the chat holds, on the Chat page.

The meter shows the last reply's prompt plus its tokens against the window the engine
gives the next one: the window depends on the pair, its recipes and the mode, and the
engine is the one that knows, so it comes from its Loaded (a load, or a reload after a
saved max_all_tokens) and from each reply's figures. A read-only conversation shows the
window its own replies had. `ChatContext` ties the meter, the prefill line and the
question asked when a turn does not fit (chat_context_full.py) to the page's replies."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from app.core.measure.metrics import DecodeStats
from app.engine.protocol import FailureCode, Mode, Rounds
from app.ui.base.labels import wrap_to_width
from app.ui.base.pair_state import PairState
from app.ui.chat.chat_context_full import FullChat
from app.ui.chat.chat_prefill import TARGET, PrefillProgress
from app.ui.chat.chat_transcript import Message

if TYPE_CHECKING:
    from app.ui.chat.chat_page import ChatPage

BAR_WIDTH = 80
METER_SECONDS = 0.25  # the live count's text at most this often while a reply streams
DROPPING_WORDS = "oldest turns left out as needed"
METER_TIP = (
    "Tokens the conversation takes in the context window: the last reply's prompt and "
    "its tokens. The window is the recipe's max_all_tokens or the model's trained "
    "positions, the smaller (the pair's is the smaller model's)."
)
DROPPING_TIP = (
    "\n\nThis conversation leaves out its oldest turns when the next one does not fit; "
    "they stay on screen, greyed and marked 'not in context'."
)


def meter_words(used: int | None, window: int, dropping: bool) -> str:
    """ "Context 1,234 / 2,048 tokens", "Context: empty", with the dropping said."""
    if used is None:
        words = f"Context 0 / {window:,} tokens" if window else "Context: empty"
    elif window:
        full = " (full)" if used >= window else ""
        words = f"Context {used:,} / {window:,} tokens{full}"
    else:
        words = f"Context {used:,} tokens"
    return f"{words} · {DROPPING_WORDS}" if dropping else words


def live_words(prompt: int | None, tokens: int, window: int) -> str:
    """While a reply is written: what is known so far (the prompt's size once the
    target reports reading it, the reply's tokens as they arrive), never "empty"."""
    if prompt is None:
        return f"Context: measuring… ({tokens:,} reply tokens so far)"
    of = f" / {window:,}" if window else ""
    return f"Context {prompt + tokens:,}{of} tokens so far (measuring…)"


class ContextMeter(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(BAR_WIDTH)
        self.bar.setMaximumHeight(self.fontMetrics().height() // 2 + 2)
        self.label = QLabel()
        self.label.setObjectName("pageHint")
        wrap_to_width(self.label)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.bar)
        layout.addWidget(self.label, 1)
        self.used: int | None = None  # None: nothing in context yet
        self.window_tokens = 0  # the last reply's window; 0 until one says it
        self.dropping = False
        # While a reply is written: (prompt tokens if known, reply tokens so far).
        self.live: tuple[int | None, int] | None = None
        self._show()

    def measuring(self, prompt: int | None, tokens: int) -> None:
        self.live = (prompt, tokens)
        self._show()

    def stop_measuring(self) -> None:
        self.live = None
        self._show()

    def show_reply(self, stats: Mapping[str, Any]) -> None:
        """A reply's figures (DecodeStats.to_json()), finished now or saved."""
        self.live = None
        self.used = int(stats.get("prompt_tokens") or 0) + int(stats.get("tokens") or 0)
        self.window_tokens = int(stats.get("window_tokens") or 0) or self.window_tokens
        self._show()

    def clear(self) -> None:
        """A new chat: empty, in the same window (another pair forgets it)."""
        self.used = None
        self.dropping = False
        self.live = None
        self._show()

    def forget_window(self) -> None:
        self.set_window(0)

    def set_window(self, tokens: int) -> None:
        self.window_tokens = tokens
        self._show()

    def set_dropping(self, dropping: bool) -> None:
        self.dropping = dropping
        self._show()

    def _show(self) -> None:
        self.bar.setRange(0, max(self.window_tokens, 1))
        if self.live is not None:
            prompt, tokens = self.live
            used = self.used if prompt is None else prompt + tokens
            self.bar.setValue(min(used or 0, self.window_tokens))
            self.label.setText(live_words(prompt, tokens, self.window_tokens))
        else:
            self.bar.setValue(min(self.used or 0, self.window_tokens))
            self.label.setText(meter_words(self.used, self.window_tokens, self.dropping))
        tip = METER_TIP + (DROPPING_TIP if self.dropping else "")
        self.setToolTip(tip)
        self.label.setToolTip(tip)


def last_reply_stats(messages: Sequence[Message]) -> dict[str, Any] | None:
    return next((m.stats for m in reversed(messages) if m.role == "assistant" and m.stats), None)


class ChatContext:
    """The Chat page's context window: its meter, the prompt's reading and a full chat."""

    def __init__(self, page: ChatPage) -> None:
        self.page = page
        self.meter = ContextMeter()
        self._meter_shown = 0.0  # time.monotonic() of the meter's last live text
        self.prefill = PrefillProgress()
        self.full = FullChat(page)
        page.bridge.prefilling.connect(self.prefill.show_progress)
        page.bridge.prefilling.connect(self._on_prefilling)
        page.bridge.rounds.connect(self._on_rounds)
        page.bridge.crashed.connect(self._on_crashed)  # no reply ends: nothing is read
        page.bridge.pair_changed.connect(self._on_pair_state)

    def _on_pair_state(self, _state: PairState) -> None:
        self.show_window()

    def show_window(self) -> None:
        """The window the next reply gets, in the mode chosen, once the engine loaded
        the pair (a read-only conversation keeps its own)."""
        loaded = self.page.bridge.pair_state.loaded
        if loaded is None or self.page.opening.reading is not None:
            return
        plain = self.page.mode_choice.name == Mode.PLAIN
        tokens = loaded.plain_window_tokens if plain else loaded.window_tokens
        if tokens:  # 0: a worker that does not say
            self.meter.set_window(tokens)

    def _on_crashed(self, _message: str) -> None:
        self.prefill.stop()
        self.meter.stop_measuring()

    def _on_prefilling(self, model: str, _done: int, total: int) -> None:
        # The target reads the whole prompt first: its total is the prompt's size.
        if self.meter.live is not None and model == TARGET:
            self.meter.measuring(total, self.meter.live[1])

    def _on_rounds(self, event: Rounds) -> None:
        if self.meter.live is not None and event.tokens:
            prompt, tokens = self.meter.live
            self.meter.live = (prompt, tokens + len(event.tokens))
            # Its text a few times a second, not per batch: a label whose text changes
            # re-lays out the window (9 layout passes and 3x the paints per batch,
            # measured), the largest cost of a streaming reply to the window.
            now = time.monotonic()
            if now - self._meter_shown >= METER_SECONDS:
                self._meter_shown = now
                self.meter.measuring(*self.meter.live)

    @property
    def dropping(self) -> bool:
        """Whether this conversation leaves out its oldest turns (its saved choice)."""
        return self.page.conversations.drop_oldest

    def reply_started(self) -> None:
        self.prefill.start()
        self.meter.measuring(None, 0)  # "empty" while a prompt is read was untrue
        self._meter_shown = 0.0  # the first batch shows at once

    def reply_finished(self, stats: DecodeStats) -> None:
        """Before the transcript draws the reply: the turns it left out are greyed."""
        self.prefill.stop()
        self.page.transcript.out_of_context = stats.dropped_messages
        self.meter.show_reply(stats.to_json())
        self.meter.set_dropping(self.dropping)

    def reply_failed(self, code: str, message: str) -> bool:
        """True when a refusal is taken care of here (the question is asked)."""
        self.prefill.stop()
        self.meter.stop_measuring()
        return code == FailureCode.CONTEXT_FULL and self.full.refused(message)

    def asks_before_send(self) -> bool:
        """True when the new turn waits for the question (the last reply filled the window)."""
        return self.full.before_send()

    def clear(self) -> None:
        self.prefill.stop()
        self.meter.clear()
        self.show_window()  # a read-only conversation's window leaves with it

    def new_pair(self) -> None:
        self.meter.forget_window()

    def restore(self, messages: Sequence[Message]) -> None:
        """A reopened conversation: its last reply's figures and turns left out, if kept."""
        stats = last_reply_stats(messages)
        reading = self.page.opening.reading is not None
        if stats is not None and "window_tokens" in stats:
            self.meter.show_reply(stats)
        elif reading:
            self.meter.forget_window()  # not the current pair's
        self.show_window()  # going on with it: the window as loaded now
        self.page.transcript.out_of_context = int((stats or {}).get("dropped_messages") or 0)
        self.meter.set_dropping(self.dropping)
