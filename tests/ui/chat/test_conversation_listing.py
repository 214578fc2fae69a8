"""The Chat page's conversation list reads the folder off the GUI thread (issue #20):
real files in a temporary data folder, the real panel offscreen."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot

from app.core.measure.conversations import (
    Conversation,
    ConversationStore,
    Listing,
    new_conversation,
)
from app.ui.base.background import is_running, wait_for_background
from app.ui.chat.chat_conversations import ID_ROLE, LISTING, ConversationPanel, Conversations
from app.ui.chat.chat_transcript import Message

TARGET, DRAFT, OTHER = Path("/packs/target"), Path("/packs/draft"), Path("/packs/other")
BROKEN = '{"kind": "draftdeck-conv'


class RecordingStore(ConversationStore):
    """A real store that notes which thread listed, and can hold a listing back once
    it has read the folder (to deliver it after a newer one)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.threads: list[threading.Thread] = []
        self.hold = threading.Event()
        self.held = threading.Event()
        self.release = threading.Event()

    def list(self) -> Listing:
        self.threads.append(threading.current_thread())
        listing = super().list()
        if self.hold.is_set():
            self.hold.clear()  # only this call waits
            self.held.set()
            self.release.wait(60)
        return listing


@pytest.fixture
def store(tmp_path: Path) -> RecordingStore:
    return RecordingStore(tmp_path / "data" / "conversations")


@pytest.fixture
def panel(qtbot: QtBot, store: RecordingStore) -> Iterator[ConversationPanel]:
    widget = ConversationPanel(store)
    widget.pair = (TARGET, DRAFT)
    qtbot.addWidget(widget)
    yield widget
    store.release.set()
    wait_for_background()


def _save(store: ConversationStore, title: str, draft: Path = DRAFT) -> Conversation:
    return store.save(replace(new_conversation(TARGET, draft), title=title))


def _titles(panel: ConversationPanel) -> list[str]:
    return [panel.list.item(i).text() for i in range(panel.list.count())]


def _deliver_held(store: RecordingStore) -> None:
    """Let the held-back listing end, and its (stale) answer reach the GUI thread."""
    store.release.set()
    assert wait_for_background()
    QCoreApplication.processEvents()


def test_listing_arrives_off_the_gui_thread_and_broken_files_are_skipped(
    panel: ConversationPanel, store: RecordingStore, qtbot: QtBot
) -> None:
    _save(store, "First")
    _save(store, "Second")
    _save(store, "Elsewhere", draft=OTHER)
    broken = store.folder / "broken.json"
    broken.write_text(BROKEN)
    panel.refresh()
    assert _titles(panel) == []  # nothing was read on the GUI thread
    qtbot.waitUntil(lambda: _titles(panel) == ["Second", "First"])
    assert store.threads and threading.main_thread() not in store.threads
    assert panel.note.text() == "1 file(s) skipped" and "broken.json" in panel.note.toolTip()
    assert broken.read_text() == BROKEN  # kept as it was
    panel.all_pairs.setChecked(True)  # from the last listing, at once
    assert _titles(panel) == ["Second", "First", "Elsewhere"]  # this pair's first


def test_previous_entries_and_selection_stay_until_the_new_listing(
    panel: ConversationPanel, store: RecordingStore, qtbot: QtBot
) -> None:
    first = _save(store, "First")
    _save(store, "Second")
    panel.refresh()
    qtbot.waitUntil(lambda: _titles(panel) == ["Second", "First"])
    panel.list.setCurrentRow(1)
    _save(store, "Third")  # another window's
    panel.refresh()
    assert _titles(panel) == ["Second", "First"]
    qtbot.waitUntil(lambda: _titles(panel) == ["Third", "Second", "First"])
    assert panel.list.currentItem().data(ID_ROLE) == first.id  # the same one, moved
    store.delete(first.id)
    panel.refresh()
    qtbot.waitUntil(lambda: _titles(panel) == ["Third", "Second"])
    assert panel.list.currentItem() is None


def test_a_stale_listing_is_dropped(
    panel: ConversationPanel, store: RecordingStore, qtbot: QtBot
) -> None:
    _save(store, "Old")
    store.hold.set()
    panel.refresh()
    assert store.held.wait(60)  # the first listing has read the folder: just "Old"
    _save(store, "New")
    panel.refresh()
    qtbot.waitUntil(lambda: _titles(panel) == ["New", "Old"])
    _deliver_held(store)
    assert _titles(panel) == ["New", "Old"]


def test_saving_shows_at_once_and_a_listing_read_before_it_does_not_hide_it(
    panel: ConversationPanel, store: RecordingStore, qtbot: QtBot
) -> None:
    conversations = Conversations(panel)
    store.hold.set()
    conversations.start(TARGET, DRAFT)  # lists in the background: held, empty
    assert store.held.wait(60)
    conversations.save([Message("user", answer=[("Hello there", False)])])
    current = conversations.current
    assert current is not None and _titles(panel) == ["Hello there"]
    assert panel.list.currentItem().data(ID_ROLE) == current.id
    _deliver_held(store)
    qtbot.waitUntil(lambda: not is_running(panel, LISTING))
    assert _titles(panel) == ["Hello there"]
    assert panel.list.currentItem().data(ID_ROLE) == current.id


def test_a_failed_rename_stays_said_after_the_next_listing(
    panel: ConversationPanel, store: RecordingStore, qtbot: QtBot
) -> None:
    mine = _save(store, "Mine")
    panel.refresh()
    qtbot.waitUntil(lambda: _titles(panel) == ["Mine"])
    store.path(mine.id).write_text(BROKEN)  # another program broke it meanwhile
    panel.rename(mine.id, "Renamed")
    assert panel.note.text().startswith("Could not rename:")
    panel.refresh()
    qtbot.waitUntil(lambda: _titles(panel) == [])
    assert panel.note.text().startswith("Could not rename:")
    assert panel.note.toolTip().startswith(f"Skipped {mine.id}.json")
