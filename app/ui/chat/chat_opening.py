"""What opening a saved conversation brings back besides its messages: the mode and
sampler its last reply used, and the words that ask before it changes the app's pair.

The pair is the whole app's (the Pair, Recipes and Tune pages follow it), so a
conversation held with another pair is never opened onto it silently: the user picks
Switch Pair (go on with it) or Read Only (look at it, the pair stays)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.core.measure.chat_record import GREEDY_WORD
from app.core.measure.conversations import Conversation, SavedMessage
from app.core.pack.compat import assess_paths
from app.ui.base.dialogs import choose
from app.ui.base.engine_bridge import GENERATING
from app.ui.chat.chat_conversations import restored
from app.ui.chat.chat_sampling import GREEDY_INDEX, RECIPE_INDEX
from app.ui.chat.chat_transcript import Message

if TYPE_CHECKING:
    from app.ui.chat.chat_page import ChatPage

SWITCH = "Switch Pair"
READ_ONLY = "Read Only"


def _last_reply(conversation: Conversation) -> SavedMessage | None:
    return next((m for m in reversed(conversation.messages) if m.role == "assistant"), None)


def saved_mode(conversation: Conversation) -> str | None:
    """ "speculative" or "plain": the mode of its last reply (None before any reply)."""
    reply = _last_reply(conversation)
    return reply.mode if reply is not None and reply.mode else None


def saved_greedy(conversation: Conversation) -> bool | None:
    """Whether its last reply was greedy (None: no reply says which sampler it used)."""
    reply = _last_reply(conversation)
    sampler = (reply.stats or {}).get("sampler") if reply is not None else None
    return sampler == GREEDY_WORD if isinstance(sampler, str) and sampler else None


def pair_words(target: str | Path | None, draft: str | Path | None) -> str:
    target_name = Path(target).name if target else "no target"
    return f"target {target_name} · draft {Path(draft).name if draft else 'none'}"


def held_blocked(conversation: Conversation) -> bool:
    """The conversation's pair cannot work together (judged from its packs as the Pair
    page does): switched to, it can only run Plain, the target alone."""
    if not conversation.draft:
        return False
    return assess_paths(Path(conversation.target), Path(conversation.draft)).blocked


def switch_question(conversation: Conversation, loaded: tuple[Path | None, Path | None]) -> str:
    held, now = pair_words(conversation.target, conversation.draft), pair_words(*loaded)
    blocked = (
        f"\n\nThat pair cannot work together: after {SWITCH} it can only run Plain (the "
        "target alone)."
        if held_blocked(conversation)
        else ""
    )
    return (
        f"“{conversation.shown_title}” was held with {held}; the pair now is {now}.\n\n"
        f"{SWITCH} chooses its pair for the whole app (the Pair, Recipes and Tune pages "
        f"use it too) and goes on with the conversation. {READ_ONLY} shows it and keeps "
        f"the pair.{blocked}"
    )


def switched_note(conversation: Conversation) -> str:
    return (
        f"Pair switched to {pair_words(conversation.target, conversation.draft)}, the one "
        "this conversation was held with: the Pair, Recipes and Tune pages use it too."
    )


def reading_note(conversation: Conversation) -> str:
    mode = saved_mode(conversation)
    held = f" in {mode.capitalize()} mode" if mode else ""
    return (
        f"Read only: held with {pair_words(conversation.target, conversation.draft)}"
        f"{held}; the "
        f"pair is unchanged. To go on with it, open it again and choose {SWITCH}; New Chat "
        "chats with the current pair."
    )


class ConversationOpening:
    """The Chat page's opening of a saved conversation (the list's click)."""

    def __init__(self, page: ChatPage) -> None:
        self.page = page
        self.reading: Conversation | None = None  # another pair's, shown read only

    def on_deleted(self, conversation_id: str) -> None:
        """The conversation on screen was deleted: an empty new chat takes its place
        (its messages left on screen would be saved again by the next turn)."""
        reading = self.reading is not None and self.reading.id == conversation_id
        if self.page.conversations.is_current(conversation_id) or reading:
            self.page.new_chat()
            self.page.say("Conversation deleted: this is a new one.")

    def open(self, conversation: Conversation) -> None:
        """Show it to go on with; the engine's cache is rebuilt by the next turn, as
        after New Chat. Another pair's asks first."""
        page = self.page
        if page.bridge.state == GENERATING:
            return
        if conversation.of_pair(*page.loaded_pair):
            self.go_on_with(conversation)
            return
        choose(
            page,
            "Open a conversation of another pair",
            switch_question(conversation, page.loaded_pair),
            [
                (SWITCH, lambda: self.go_on_with(conversation, switch=True)),
                (READ_ONLY, lambda: self.read(conversation)),
            ],
        )

    def go_on_with(self, conversation: Conversation, switch: bool = False) -> None:
        page = self.page
        if page.bridge.state == GENERATING:
            return  # a reply started while the question was open
        if switch:
            target, draft = Path(conversation.target), conversation.draft
            draft_path = Path(draft) if draft else None
            if not page.selection.holds(target, draft_path):
                # The window may ask first (unsaved recipe edits): go on once it is chosen.
                again = lambda: self.go_on_with(conversation, switch=True)  # noqa: E731
                page.selection.select(target, draft_path, then=again)
                return
            page.reload_if_pair_changed()  # the page follows the selection when shown
        page.new_chat()
        self._show(page.conversations.open(conversation))
        # The mode and sampler it used (a blocked pair's Plain chat comes back in Plain).
        page.mode_choice.restore(saved_mode(conversation), page.loaded_pair)
        greedy = saved_greedy(conversation)
        if greedy is not None:
            page.sampling.choice.setCurrentIndex(GREEDY_INDEX if greedy else RECIPE_INDEX)
        if switch:
            page.say(switched_note(conversation))

    def read(self, conversation: Conversation) -> None:
        page = self.page
        page.new_chat()
        page.transcript.read_only = True
        self.reading = conversation  # first: its window is its own, not the pair's
        self._show([restored(m) for m in conversation.messages])
        # The list marks what is on screen (so Rename and Delete act on it): another
        # pair's conversation is listed only with All pairs.
        page.panel.all_pairs.setChecked(True)
        page.panel.select(conversation.id)
        page.mode_choice.show_held(saved_mode(conversation))
        page.update_actions()
        page.say(reading_note(conversation))

    def _show(self, messages: list[Message]) -> None:
        """Its messages, scrolled to the last reply, and the figures its replies kept."""
        page = self.page
        page.transcript.messages = messages
        page.context.restore(messages)  # how full it was, and the turns left out
        page.transcript.render_all()
        page.transcript.show_end()
        page.charts.show_saved([m.stats for m in messages if m.stats is not None])
