"""When the next turn does not fit the context window, the user chooses: a new chat, or
leaving out the oldest turns from now on in this conversation (the engine's
Generate.drop_oldest), a choice kept with the conversation so later turns do it without
asking.

A turn does not fit when the engine refuses it (context_full: the prompt alone fills
the window) or when the last reply already stopped because the window was full (its
next turn could not even start). The new message waits in the transcript while the
question is open; Cancel puts it back in the message box."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.engine.protocol import StopReason
from app.ui.base.dialogs import choose
from app.ui.base.engine_bridge import READY

if TYPE_CHECKING:
    from app.ui.chat.chat_page import ChatPage

NEW_CHAT, DROP_OLDEST = "Start a New Chat", "Drop the Oldest Turns"
TITLE = "The conversation is full"
WAYS = (
    f"{NEW_CHAT} sends your message in a new conversation (this one stays in the list). "
    f"{DROP_OLDEST} leaves out this conversation's oldest turns, as many as each new turn "
    "needs, from now on; they stay on screen, greyed and marked 'not in context'."
)
DROPPING_NOTE = (
    "From now on this conversation leaves out its oldest turns when the next one does not "
    "fit the context window (greyed above, marked 'not in context')."
)
NEW_CHAT_NOTE = "The last conversation was full (it stays in the list): this is a new one."
NOT_SENT_NOTE = (
    "Not sent: the conversation is full. Your message is back in the box; send it to "
    "choose again, or press New Chat."
)


def filled_reason(window: int, used: int) -> str:
    return (
        f"The last reply filled the {window:,}-token context window: the conversation "
        f"holds {used:,} tokens, so no new turn fits."
    )


class FullChat:
    def __init__(self, page: ChatPage) -> None:
        self.page = page

    def before_send(self) -> bool:
        """Ask first when the reply before the new message stopped on a full window."""
        messages = self.page.transcript.messages
        if self.page.conversations.drop_oldest or len(messages) < 2:
            return False
        last_reply = messages[-2]
        if last_reply.role != "assistant" or last_reply.stopped_by != StopReason.CONTEXT_FULL:
            return False
        stats = last_reply.stats or {}
        used = int(stats.get("prompt_tokens") or 0) + int(stats.get("tokens") or 0)
        self._ask(filled_reason(int(stats.get("window_tokens") or used), used))
        return True

    def refused(self, message: str) -> bool:
        """The engine refused the turn (context_full). Ask when leaving turns out could
        help; a message too long on its own (or still too long with turns left out) is
        said on the page and fails as any refusal."""
        transcript = self.page.transcript
        earlier_turns = sum(m.role == "user" for m in transcript.messages) > 1
        if self.page.conversations.drop_oldest or not earlier_turns:
            self.page.say(message)
            return False
        if transcript.messages[-1].role == "assistant" and transcript.messages[-1].stats is None:
            transcript.messages.pop()  # the reply that never started
            transcript.render_all()
        self._ask(message)
        return True

    def _ask(self, reason: str) -> None:
        choose(
            self.page,
            TITLE,
            f"{reason}\n\n{WAYS}",
            [(NEW_CHAT, self.start_new_chat), (DROP_OLDEST, self.drop_oldest)],
            on_cancel=self.unsend,
        )

    def _take_message(self) -> str:
        """The waiting message, out of this conversation (saved without it)."""
        page = self.page
        message = page.transcript.messages.pop()
        page.transcript.render_all()
        page.conversations.save(page.transcript.messages)
        return message.text

    def start_new_chat(self) -> None:
        page = self.page
        if page.bridge.state != READY:  # the engine went away while the question was open
            self.unsend()
            return
        text = self._take_message()
        page.new_chat()
        page.say(NEW_CHAT_NOTE)
        page.transcript.add_user(text)
        page.conversations.save(page.transcript.messages)
        page.reply()

    def drop_oldest(self) -> None:
        page = self.page
        if page.bridge.state != READY:
            self.unsend()
            return
        page.conversations.remember_drop_oldest(page.transcript.messages)
        page.context.meter.set_dropping(True)
        page.say(DROPPING_NOTE)
        page.reply()

    def unsend(self) -> None:
        self.page.input.setPlainText(self._take_message())
        self.page.say(NOT_SENT_NOTE)
