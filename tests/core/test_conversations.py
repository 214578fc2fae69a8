"""The conversation store on real files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.measure.conversations import (
    TITLE_LENGTH,
    Conversation,
    ConversationDeleted,
    ConversationError,
    ConversationStore,
    SavedMessage,
    default_title,
    new_conversation,
)

TARGET, DRAFT = Path("/packs/target"), Path("/packs/draft")


def _messages(text: str) -> tuple[SavedMessage, ...]:
    return (
        SavedMessage("user", ((text, False),)),
        SavedMessage(
            "assistant",
            (("Hel", True), ("lo", False)),
            thinking=(("hmm", True),),
            mode="speculative",
            stopped_by="eos",
            stats={"tokens": 2, "tok_s": 12.5},
        ),
    )


def test_save_list_read_back_everything(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "conversations")
    assert store.list().conversations == ()
    first = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Hi there")))
    listing = store.list()
    assert listing.conversations == (first,) and listing.skipped == ()
    assert first.messages[1].answer == (("Hel", True), ("lo", False))
    assert first.messages[1].stats == {"tokens": 2, "tok_s": 12.5}
    assert first.shown_title == "Hi there"
    assert first.of_pair(TARGET, DRAFT) and not first.of_pair(TARGET, None)
    second = store.save(new_conversation(TARGET, None).with_messages(_messages("Second")))
    assert [c.id for c in store.list().conversations] == [second.id, first.id]  # newest first
    assert second.draft is None


def test_default_title_is_the_first_line_elided() -> None:
    assert default_title("  What is\n a lighthouse? ") == "What is a lighthouse?"
    long = default_title("word " * 40)
    assert len(long) == TITLE_LENGTH and long.endswith("…")
    assert default_title("") == "New conversation"


def test_rename_and_delete(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    kept = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Keep")))
    gone = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Gone")))
    renamed = store.rename(kept.id, "  Lighthouses   and fog ")
    assert renamed.shown_title == "Lighthouses and fog"
    store.delete(gone.id)
    assert not store.path(gone.id).exists()
    assert [c.shown_title for c in store.list().conversations] == ["Lighthouses and fog"]
    # A later save of the renamed conversation (a window that did not see the rename)
    # keeps the name given on disk.
    again = store.save(kept.with_messages(_messages("Keep") * 2))
    assert again.title == "Lighthouses and fog" and len(again.messages) == 4


def test_writes_are_whole_files_without_leftovers(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    saved = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Atomic")))
    for _ in range(3):
        saved = store.save(saved.with_messages(saved.messages + _messages("more")))
    assert [p.name for p in tmp_path.iterdir()] == [f"{saved.id}.json"]  # no temp files
    assert len(json.loads(store.path(saved.id).read_text())["messages"]) == 8


def test_a_broken_or_foreign_file_is_skipped_and_kept(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    good = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Good")))
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": "draftdeck-conv')
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"hello": 1}')
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"kind": "draftdeck-conversation", "id": "wrong"}))
    listing = store.list()
    assert listing.conversations == (good,)
    assert len(listing.skipped) == 3
    assert any("broken.json" in line for line in listing.skipped)
    with pytest.raises(ConversationError):
        store.delete("notes")
    with pytest.raises(ConversationError):
        store.save(replace(good, id="notes"))
    assert broken.read_text() == '{"kind": "draftdeck-conv'
    assert foreign.read_text() == '{"hello": 1}'
    assert wrong.exists()


def test_two_stores_on_one_folder_see_each_others_conversations(tmp_path: Path) -> None:
    one, two = ConversationStore(tmp_path), ConversationStore(tmp_path)
    a = one.save(new_conversation(TARGET, DRAFT).with_messages(_messages("From one")))
    b = two.save(new_conversation(TARGET, DRAFT).with_messages(_messages("From two")))
    a = one.save(a.with_messages(a.messages + _messages("One goes on")))
    for store in (one, two):
        assert {c.id for c in store.list().conversations} == {a.id, b.id}
    assert len(two.read(two.path(a.id)).messages) == 4


def test_a_deleted_conversation_is_never_written_again(tmp_path: Path) -> None:
    """Here or in another window: a save after the delete must not bring it back."""
    store, other = ConversationStore(tmp_path), ConversationStore(tmp_path)
    mine = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Mine")))
    store.delete(mine.id)
    with pytest.raises(ConversationDeleted, match=f"{mine.id}.json was deleted"):
        store.save(mine.with_messages(mine.messages + _messages("After")))
    theirs = store.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Theirs")))
    (listed,) = other.list().conversations  # the other window has it open
    store.delete(theirs.id)
    with pytest.raises(ConversationDeleted):
        other.save(listed.with_messages(listed.messages + _messages("Late")))
    assert list(tmp_path.iterdir()) == []


def test_a_title_given_in_another_window_outlives_a_save_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file this store wrote last is not read back before its next save (a long
    chat's reading cost the window tens of ms at each reply's end); one another window
    wrote since is, and its title is kept."""
    here, there = ConversationStore(tmp_path), ConversationStore(tmp_path)
    read_back: list[Path] = []
    reader = here.read

    def read(path: Path) -> Conversation:
        read_back.append(path)
        return reader(path)

    monkeypatch.setattr(here, "read", read)
    mine = here.save(new_conversation(TARGET, DRAFT).with_messages(_messages("Mine")))
    mine = here.save(mine.with_messages(mine.messages + _messages("Again")))
    assert read_back == []
    there.rename(mine.id, "Named there")
    saved = here.save(mine.with_messages(mine.messages + _messages("Later")))
    assert read_back == [here.path(mine.id)]
    assert saved.title == "Named there" and len(saved.messages) == 6
    assert here.read(here.path(mine.id)) == saved
