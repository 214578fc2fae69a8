"""The Chat page's saved conversations: a compact side list (open, rename, delete) and
the link between the transcript and the store (core/measure/conversations.py).

A conversation is saved after every user message and every finished reply, so a crash
or quit loses at most the reply being written. The list shows the current pair's
conversations: one opened continues on the loaded pair, so a list of other pairs'
would mostly offer chats that change model when continued; "All pairs" shows them too,
and opening one of another pair chooses that pair first.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.measure.chat_record import PairRecipes
from app.core.measure.conversations import (
    Conversation,
    ConversationDeleted,
    ConversationError,
    ConversationStore,
    Listing,
    SavedMessage,
    new_conversation,
)
from app.ui.base import background
from app.ui.base.dialogs import ask
from app.ui.base.labels import wrap_to_width
from app.ui.base.scheme import colours
from app.ui.chat.chat_transcript import Message

ID_ROLE = Qt.ItemDataRole.UserRole
LISTING = "conversations"  # the background key: a newer listing makes an older one stale


def saved(message: Message) -> SavedMessage:
    return SavedMessage(
        role=message.role,
        answer=tuple(message.answer),
        thinking=tuple(message.thinking),
        mode=message.mode,
        stopped_by=message.stopped_by,
        stats=message.stats,
    )


def restored(message: SavedMessage) -> Message:
    return Message(
        message.role,
        answer=list(message.answer),
        thinking=list(message.thinking),
        mode=message.mode,
        stopped_by=message.stopped_by,
        stats=dict(message.stats) if message.stats is not None else None,
    )


def _pair_words(conversation: Conversation) -> str:
    draft = Path(conversation.draft).name if conversation.draft else "no draft"
    return f"{Path(conversation.target).name} · {draft}"


class ConversationPanel(QWidget):
    """The list with Rename, Delete (asks first; also the Delete key) and All pairs.

    The folder is read off the GUI thread (`refresh`); until its answer arrives the
    list shows the last one, updated at once for what this window saved or deleted."""

    open_requested = Signal(object)  # Conversation
    deleted = Signal(str)  # the id of a conversation this panel deleted

    def __init__(self, store: ConversationStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.pair: tuple[Path | None, Path | None] = (None, None)
        self.current_id = ""  # the conversation in the transcript, marked in the list
        self.shown: list[Conversation] = []
        self.listing = Listing((), ())
        self.problem = ""  # the last failed save, rename or delete, until one works
        self.busy = False  # a reply is being written: no opening, renaming or deleting
        heading = QLabel("Conversations")
        heading.setObjectName("pageHint")
        self.list = QListWidget()
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        # Long titles are elided (full in the tooltip), never scrolled sideways.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.installEventFilter(self)
        self.rename_button = QPushButton("Rename")
        self.delete_button = QPushButton("Delete")
        self.all_pairs = QCheckBox("All pairs")
        self.all_pairs.setToolTip("Also list the conversations held with other pairs")
        self.note = QLabel()  # files that could not be read, or a failed save
        self.note.setObjectName("pageHint")
        wrap_to_width(self.note)
        self.note.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.all_pairs)
        layout.addWidget(self.note)
        self.setMinimumWidth(120)
        self.list.itemClicked.connect(self._on_open)
        self.list.itemActivated.connect(self._on_open)
        self.list.itemChanged.connect(self._on_edited)
        self.list.currentItemChanged.connect(self._update_buttons)
        self.rename_button.clicked.connect(self._on_rename_clicked)
        self.delete_button.clicked.connect(self.ask_delete)
        self.all_pairs.toggled.connect(self.show_listing)
        self._update_buttons()

    def refresh(self) -> None:
        """Read the folder again in the background (another window may have saved)."""
        background.run(self, LISTING, self.store.list, self._listed, self._not_listed)

    def _listed(self, listing: Listing) -> None:
        self.listing = listing
        self.show_listing()

    def _not_listed(self, error: Exception) -> None:
        self.say(f"Could not list the conversations: {error}")

    def changed(self, listing: Listing, problem: str = "", current: str | None = None) -> None:
        """Show what this window just wrote, marking `current` as the conversation in
        the transcript if given (the list filled once: a save at a reply's end filled it
        twice, each time with every saved conversation); a listing read before it is read
        again."""
        self.listing = listing
        self.problem = problem
        if current is not None:
            self._mark(current)
        self.show_listing()
        if background.is_running(self, LISTING):
            self.refresh()

    def show_listing(self) -> None:
        """Fill the list from the last listing, for the current pair; the selected
        conversation (else the one in the transcript) stays selected if listed."""
        current = self.list.currentItem()
        selected = current.data(ID_ROLE) if current is not None else self.current_id
        mine = [c for c in self.listing.conversations if c.of_pair(*self.pair)]
        others = [c for c in self.listing.conversations if not c.of_pair(*self.pair)]
        self.shown = mine + (others if self.all_pairs.isChecked() else [])
        other_ids = {c.id for c in others}
        self.list.blockSignals(True)
        self.list.clear()
        for conversation in self.shown:
            item = QListWidgetItem(conversation.shown_title)
            item.setData(ID_ROLE, conversation.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            when = conversation.updated[:16].replace("T", " ")
            item.setToolTip(f"{conversation.shown_title}\n{_pair_words(conversation)}\n{when}")
            if conversation.id in other_ids:
                item.setForeground(QColor(colours().hint))
            self.list.addItem(item)
            if conversation.id == selected:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._update_buttons()
        skipped = self.listing.skipped
        self.say(self.problem or (f"{len(skipped)} file(s) skipped" if skipped else ""))
        self.note.setToolTip("\n".join(skipped))

    def say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def select(self, conversation_id: str) -> None:
        """Mark the conversation in the transcript."""
        self._mark(conversation_id)
        self.show_listing()

    def _mark(self, conversation_id: str) -> None:
        self.current_id = conversation_id
        self.list.setCurrentRow(-1)  # the old selection gives way

    def conversation_at(self, item: QListWidgetItem | None) -> Conversation | None:
        wanted = item.data(ID_ROLE) if item is not None else None
        return next((c for c in self.shown if c.id == wanted), None)

    def rename(self, conversation_id: str, title: str) -> None:
        try:
            renamed = self.store.rename(conversation_id, title)
        except (OSError, FileError, ConversationError) as exc:
            self.changed(self.listing, f"Could not rename: {exc}")
            return
        self.changed(self.listing.with_saved(renamed))

    def ask_delete(self) -> None:
        chosen = self.conversation_at(self.list.currentItem())
        if chosen is None:
            return
        ask(
            self,
            "Delete conversation",
            f"Delete “{chosen.shown_title}”? Its messages cannot be brought back.",
            "Delete",
            lambda: self._delete(chosen.id),
        )

    def _delete(self, conversation_id: str) -> None:
        try:
            self.store.delete(conversation_id)
        except (OSError, FileError, ConversationError) as exc:
            self.changed(self.listing, f"Could not delete: {exc}")
            return
        self.changed(self.listing.without(conversation_id))
        self.deleted.emit(conversation_id)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.list and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if (
                event.key() == Qt.Key.Key_Delete
                and self.list.state() != self.list.State.EditingState
            ):
                self.ask_delete()
                return True
        return super().eventFilter(watched, event)

    def _on_open(self, item: QListWidgetItem) -> None:
        chosen = self.conversation_at(item)
        if chosen is not None and chosen.id != self.current_id:
            self.open_requested.emit(chosen)

    def _on_edited(self, item: QListWidgetItem) -> None:
        chosen = self.conversation_at(item)
        if chosen is not None and item.text().strip() and item.text() != chosen.shown_title:
            self.rename(chosen.id, item.text())
        elif chosen is not None:
            self.show_listing()  # an emptied name: back to the one it had

    def _on_rename_clicked(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.list.setEnabled(not busy)
        self._update_buttons()

    def _update_buttons(self) -> None:
        chosen = self.list.currentItem() is not None and not self.busy
        self.rename_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)


class Conversations:
    """The conversation in the transcript and its saving."""

    def __init__(self, panel: ConversationPanel) -> None:
        self.panel = panel
        self.store = panel.store
        self.current: Conversation | None = None  # None until its first message
        self.notice = ""  # said under the list while this conversation is on screen

    def start(self, target: Path | None, draft: Path | None) -> None:
        """A new conversation with this pair (written with its first message)."""
        self.current = None
        if self.notice:  # it was about the conversation that leaves the screen
            self.notice = self.panel.problem = ""
        self.panel.pair = (target, draft)
        self.panel.select("")
        self.panel.refresh()

    def save(self, messages: list[Message], recipes: PairRecipes | None = None) -> None:
        """Save the finished messages (a reply still being written waits for its end),
        with the recipes a reply that just finished was made with."""
        kept = tuple(saved(m) for m in messages if m.role == "user" or m.stats is not None)
        target, draft = self.panel.pair
        if not kept or target is None:
            return
        if self.current is None:
            self.current = new_conversation(target, draft)
        if recipes is not None:
            self.current = replace(self.current, recipes=recipes.to_json())
        try:
            try:
                self.current = self.store.save(self.current.with_messages(kept))
            except ConversationDeleted:
                # Deleted by another window while open here: the file stays deleted,
                # and what is still on screen is kept as a new conversation.
                gone = self.current.shown_title
                again = replace(new_conversation(target, draft), recipes=self.current.recipes)
                self.current = self.store.save(again.with_messages(kept))
                self.notice = f"“{gone}” was deleted elsewhere: this chat is saved as a new one."
        except (OSError, FileError, ConversationError) as exc:
            self.panel.changed(self.panel.listing, f"Could not save this conversation: {exc}")
            return
        listing = self.panel.listing.with_saved(self.current)
        self.panel.changed(listing, self.notice, current=self.current.id)

    @property
    def drop_oldest(self) -> bool:
        """This conversation leaves out its oldest turns when the next does not fit."""
        return self.current is not None and self.current.drop_oldest

    def remember_drop_oldest(self, messages: list[Message]) -> None:
        """Keep the choice with the conversation (saved now, so it outlives a quit)."""
        if self.current is not None:
            self.current = replace(self.current, drop_oldest=True)
            self.save(messages)

    def is_current(self, conversation_id: str) -> bool:
        return self.current is not None and self.current.id == conversation_id

    def open(self, conversation: Conversation) -> list[Message]:
        """Make it the current conversation; its messages for the transcript."""
        self.current = conversation
        self.notice = ""
        self.panel.select(conversation.id)
        return [restored(m) for m in conversation.messages]
