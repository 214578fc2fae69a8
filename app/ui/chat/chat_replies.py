"""The Chat page's replies: a turn sent, the last reply written again, and what the
engine's rounds, finished reply and failures bring to the transcript, the charts and
the saved conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.measure.chat_record import PairRecipes
from app.engine.protocol import ChatTurn, Done, Generate, Mode, Rounds
from app.ui.base.engine_bridge import READY

if TYPE_CHECKING:
    from app.ui.chat.chat_page import ChatPage


class ChatReplies:
    def __init__(self, page: ChatPage) -> None:
        self.page = page
        self.recipes: PairRecipes | None = None  # what the reply being written runs with
        page.bridge.rounds.connect(self._on_rounds)
        page.bridge.finished.connect(self._on_finished)
        page.bridge.failed.connect(self._on_failed)

    def _can_send(self) -> bool:
        return self.page.bridge.state == READY and self.page.opening.reading is None

    def conversation(self) -> tuple[ChatTurn, ...]:
        return tuple(ChatTurn(m.role, m.text) for m in self.page.transcript.messages)

    def send(self) -> None:
        page = self.page
        text = page.input.toPlainText().strip()
        if not text or not self._can_send():
            return
        page.input.clear()
        page.chat_note.hide()
        page.transcript.add_user(text)
        page.conversations.save(page.transcript.messages)
        if not page.context.asks_before_send():  # else once the user chose how it fits
            self.reply()

    def regenerate(self) -> None:
        """The last reply again, in the mode and with the sampler chosen now (a sampled
        reply differs; a greedy one repeats): it replaces the old one, saved at its end."""
        page = self.page
        if not self._can_send():
            return
        if page.transcript.drop_last_reply():
            page.charts.drop_last_reply()  # its figures went with it
            page.chat_note.hide()
            self.reply()

    def reply(self) -> None:
        """Ask the engine for a reply to the conversation in the transcript."""
        page = self.page
        mode = page.mode_choice.name
        page.transcript.start_assistant(mode)
        page.charts.start_reply(mode)
        page.context.reply_started()
        page.sampling.read_recipe(page.loaded_pair[0])  # a sampler saved since applies now
        # A pending agreement check now waits for this reply (the pair line says so).
        page.bridge.generate(
            Generate(
                messages=self.conversation()[:-1],
                mode=mode,
                max_tokens=page.max_tokens.value(),
                sampler=page.sampling.sampler(),
                seed=page.sampling.seed(),
                drop_oldest=page.context.dropping,
                drafting=page.drafting.asked(),
            )
        )
        # As the files are now: the sampler was read just above, and the bridge loaded
        # the pair again if a load-time key differed from what it runs with.
        self.recipes = PairRecipes.read(*page.loaded_pair)

    def _on_rounds(self, event: Rounds) -> None:
        self.page.transcript.add_pieces(event.pieces, event.from_draft)
        self.page.charts.add_rounds(event)
        for r in event.rounds:
            if r.note:  # adaptive drafting stepped aside: said while the reply streams
                self.page.say(f"Plain for now: {r.note}.")
            elif r.kept_note:  # a judgement on a busy computer: said, as an aside is
                self.page.say(f"{r.kept_note[:1].upper()}{r.kept_note[1:]}.")

    def _on_finished(self, event: Done) -> None:
        page = self.page
        stats = event.stats
        figures = stats.to_json()
        agreement = page.bridge.pair_state.agreement
        if stats.mode == Mode.SPECULATIVE and agreement is not None:
            figures["verify_agreement"] = agreement.to_json()
        page.context.reply_finished(stats)
        page.transcript.finish(figures, event.stopped_by)
        message = page.transcript.messages[-1]
        loaded = page.bridge.pair_state.loaded
        page.phone_forecast.reply_finished(
            page.loaded_pair,
            stats,
            loaded.lossless_expected if loaded is not None else None,
            lambda line: page.transcript.add_phone_line(message, line.text, line.tip),
        )
        page.charts.finish_reply(stats.tok_s)
        if stats.mode == Mode.PLAIN and stats.tok_s:
            page.charts.set_reference(stats.tok_s)
        page.conversations.save(page.transcript.messages, self.recipes)
        if page.isVisible():
            page.reload_if_pair_changed()

    def _on_failed(self, code: str, message: str) -> None:
        """A request failed (its words are the bridge's last error, in the header)."""
        page = self.page
        if page.context.reply_failed(code, message):
            return  # a turn that does not fit: the user is asked what to do
        last = page.transcript.messages[-1] if page.transcript.messages else None
        if last is not None and last.role == "assistant" and last.stats is None:
            page.transcript.finish({}, "error")
            page.conversations.save(page.transcript.messages)
