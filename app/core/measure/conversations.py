"""Saved chat conversations: one JSON file per conversation in the data folder.

Each file is written whole and atomically, so two windows sharing the folder never
lose each other's conversations and a crash leaves the last saved state. A file that
cannot be read as a conversation (broken, foreign) is skipped with a message, and
never overwritten or deleted: only files this store recognises as its own are.

A deleted conversation stays deleted: the store refuses to write it again, whether this
store deleted it or another window did (a conversation this store has read or written
whose file is gone was deleted, and is not brought back by the next save).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.infra.paths import app_dirs
from app.core.infra.typed_json import TypedJsonError, from_json, to_json

KIND = "draftdeck-conversation"  # marks the files DraftDeck wrote (and may delete)
TITLE_LENGTH = 48  # characters of the first message a default title keeps
UNTITLED = "New conversation"

Pieces = tuple[tuple[str, bool], ...]  # a message's (text, came from the draft) pieces


@dataclass(frozen=True)
class SavedMessage:
    role: str  # "user" or "assistant"
    answer: Pieces = ()
    thinking: Pieces = ()
    mode: str = ""  # a reply's Mode
    stopped_by: str = ""
    stats: dict[str, object] | None = None  # the reply's figures, once it finished


@dataclass(frozen=True)
class Conversation:
    id: str
    target: str  # the pair it was held with (paths as chosen)
    draft: str | None
    created: str  # local time, ISO 8601 to the microsecond (it orders the list)
    updated: str
    messages: tuple[SavedMessage, ...] = ()
    title: str = ""  # empty: the first user message stands for it
    # Chosen when it outgrew the context window: its oldest turns are left out as
    # needed (without it, a turn that does not fit asks what to do).
    drop_oldest: bool = False
    # The recipes its last reply was made with (chat_record.PairRecipes.to_json()); None
    # in a file saved before they were recorded.
    recipes: dict[str, object] | None = None
    kind: str = KIND

    @property
    def shown_title(self) -> str:
        if self.title:
            return self.title
        first = next((m for m in self.messages if m.role == "user"), None)
        return default_title("".join(t for t, _ in first.answer)) if first else UNTITLED

    def of_pair(self, target: Path | None, draft: Path | None) -> bool:
        return self.target == str(target) and self.draft == (str(draft) if draft else None)

    def with_messages(self, messages: tuple[SavedMessage, ...]) -> Conversation:
        return replace(self, messages=messages, updated=_now())


def default_title(text: str) -> str:
    """The first line of a message, elided to TITLE_LENGTH characters."""
    line = " ".join(text.split())
    if len(line) <= TITLE_LENGTH:
        return line or UNTITLED
    return line[: TITLE_LENGTH - 1].rstrip() + "…"


def new_conversation(target: Path, draft: Path | None) -> Conversation:
    now = _now()
    stamp = now.replace("-", "").replace(":", "").replace("T", "-")[:15]
    return Conversation(
        id=f"{stamp}-{secrets.token_hex(4)}",
        target=str(target),
        draft=str(draft) if draft else None,
        created=now,
        updated=now,
    )


def _now() -> str:
    seconds = time.time()
    micro = int(seconds * 1_000_000) % 1_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(seconds)) + f".{micro:06d}"


class ConversationError(Exception):
    """A file in the conversations folder that is not a conversation DraftDeck wrote."""


class ConversationDeleted(ConversationError):
    """A save of a conversation that was deleted (here or by another window)."""


@dataclass(frozen=True)
class Listing:
    conversations: tuple[Conversation, ...]  # newest first
    skipped: tuple[str, ...]  # one sentence per file that could not be read

    def with_saved(self, conversation: Conversation) -> Listing:
        """This listing after `conversation` was written (without reading the folder)."""
        kept = [c for c in self.conversations if c.id != conversation.id]
        return replace(self, conversations=_newest_first([*kept, conversation]))

    def without(self, conversation_id: str) -> Listing:
        """This listing after that conversation was deleted."""
        kept = tuple(c for c in self.conversations if c.id != conversation_id)
        return replace(self, conversations=kept)


def _newest_first(conversations: list[Conversation]) -> tuple[Conversation, ...]:
    return tuple(sorted(conversations, key=lambda c: (c.updated, c.id), reverse=True))


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells one write of the file from another (an atomic write makes a new
    file), or None if there is none."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


class ConversationStore:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or app_dirs().data / "conversations"
        # Ids this store has seen on disk: one of them whose file is gone was deleted.
        self._seen: set[str] = set()
        # Each file as this store last wrote it (inode, size, time): a file still so was
        # neither renamed nor replaced elsewhere, and is not read back before the next
        # save (a reply's end saves on the GUI thread: reading took 28 ms at 3,000 tokens).
        self._written: dict[str, tuple[int, int, int]] = {}

    def path(self, conversation_id: str) -> Path:
        return self.folder / f"{conversation_id}.json"

    def read(self, path: Path) -> Conversation:
        """Raises FileError or ConversationError for anything but a conversation."""
        data = read_json_object(path)
        if data.get("kind") != KIND:
            raise ConversationError(f"{path.name} is not a DraftDeck conversation")
        try:
            found = from_json(Conversation, data)
        except TypedJsonError as exc:
            raise ConversationError(f"{path.name} cannot be read: {exc}") from None
        if path.stem != found.id:
            raise ConversationError(f"{path.name} holds conversation {found.id}")
        self._seen.add(found.id)
        return found

    def list(self) -> Listing:
        """Reads every file in the folder (slow with many: the window calls it off the
        GUI thread)."""
        found: list[Conversation] = []
        skipped: list[str] = []
        if not self.folder.is_dir():
            return Listing((), ())
        for path in sorted(self.folder.glob("*.json")):
            try:
                found.append(self.read(path))
            except (FileError, ConversationError) as exc:
                skipped.append(f"Skipped {path.name}: {exc}")
        return Listing(_newest_first(found), tuple(skipped))

    def save(self, conversation: Conversation) -> Conversation:
        """Write it whole. A title given on disk meanwhile (another window renamed it)
        is kept. A file of that name that is not ours is never overwritten, and one
        that was deleted is never written again (ConversationDeleted)."""
        path = self.path(conversation.id)
        stamp = _stamp(path)
        if stamp is not None and stamp != self._written.get(conversation.id):
            on_disk = self.read(path)
            if on_disk.title and on_disk.title != conversation.title:
                conversation = replace(conversation, title=on_disk.title)
        elif stamp is None and conversation.id in self._seen:
            raise ConversationDeleted(f"{path.name} was deleted")
        self._write(conversation)
        stamp = _stamp(path)
        if stamp is not None:
            self._written[conversation.id] = stamp
        return conversation

    def rename(self, conversation_id: str, title: str) -> Conversation:
        current = self.read(self.path(conversation_id))
        renamed = replace(current, title=" ".join(title.split()))
        self._write(renamed)
        # Read back at the next save: what saves it next may not know the new title.
        self._written.pop(conversation_id, None)
        return renamed

    def _write(self, conversation: Conversation) -> None:
        # On one line: indented, json writes in Python, not C (11.5 ms against 1.5 at
        # 3,000 tokens), and no one reads a reply's thousands of pieces by eye.
        atomic_write_json(self.path(conversation.id), to_json(conversation), indent=None)
        self._seen.add(conversation.id)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation file this store wrote (read first: a foreign file of
        that name raises and stays)."""
        path = self.path(conversation_id)
        self.read(path)
        path.unlink()
