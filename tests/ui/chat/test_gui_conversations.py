"""Saved conversations on the Chat page, with the real engine on the fixture bundles."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from html import escape
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QSpinBox
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.infra.settings import load_settings
from app.core.measure.conversations import ConversationStore, SavedMessage, new_conversation
from app.ui.base.engine_bridge import ERROR, GENERATING, READY
from app.ui.chat.chat_export import JSON_FILTER, MARKDOWN_FILTER, ChatExport, documents_folder
from app.ui.chat.chat_mode import SPECULATIVE_AGAIN, WHY_LINK
from app.ui.chat.chat_opening import READ_ONLY, SWITCH
from app.ui.chat.chat_sampling import RECIPE_INDEX
from app.ui.recipes.recipe_fields import NumberEditor
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import chat_window, fixed_drafting, send

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    pair = ("qwen3-target", "qwen3-draft-noisy")
    extra = ("qwen3-draft-identical", "qwen35-draft")
    # Fixed drafting: a speculative reply surely drafts (adaptive drafting may stand
    # aside on a busy machine), so the charts have acceptance to keep or clear.
    with chat_window(qtbot, bundle_copy, pair, extra, prepare=fixed_drafting(pair[1])) as win:
        win.chat_page.max_tokens.setValue(12)
        yield win


def _choose(qtbot: QtBot, window: MainWindow, draft: str, state: str = READY) -> None:
    root = window.library.root
    window.show_page("pair")
    window.pair_page.choose(root / "qwen3-target", root / draft)
    window.show_page("chat")
    qtbot.waitUntil(lambda: window.chat_page.bridge.state == state, timeout=30_000)


def _store() -> ConversationStore:
    return ConversationStore(app_dirs().data / "conversations")  # as a second window sees it


def _confirm_box(window: MainWindow) -> QMessageBox:
    boxes = window.chat_page.panel.findChildren(QMessageBox, "confirmDialog")
    (box,) = [b for b in boxes if b.isVisible()]  # a closed one awaits its deletion
    return box


def test_a_reply_is_saved_and_reopens(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    send(qtbot, window, "Tell me about lighthouses.")
    (saved,) = _store().list().conversations
    assert [m.role for m in saved.messages] == ["user", "assistant"]
    assert saved.messages[1].stats == page.transcript.messages[1].stats
    assert "".join(t for t, _ in saved.messages[1].answer) == page.transcript.messages[1].text
    reply = page.transcript.messages[1].text
    page.new_button.click()
    assert page.transcript.messages == []
    assert page.panel.list.count() == 1
    assert page.panel.list.item(0).text() == "Tell me about lighthouses."
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    assert [m.text for m in page.transcript.messages] == ["Tell me about lighthouses.", reply]
    assert reply in page.transcript.toPlainText()
    # A save fills the list once, its conversation marked (a reply's end filled it
    # twice, with every saved conversation each time, on the GUI thread).
    fills: list[int] = []
    page.panel.list.model().modelReset.connect(lambda: fills.append(1))
    page.conversations.save(page.transcript.messages)
    assert len(fills) == 1
    assert page.panel.list.currentItem().text() == "Tell me about lighthouses."
    send(qtbot, window, "And fog?")  # goes on in the same conversation
    (again,) = _store().list().conversations
    assert again.id == saved.id and len(again.messages) == 4


def test_user_message_is_saved_before_the_reply(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    page.input.setPlainText("Saved at once?")
    page.send()
    (saved,) = _store().list().conversations  # written before any reply came
    assert [m.role for m in saved.messages] == ["user"]
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)


def test_rename_and_delete_ask_first(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    send(qtbot, window, "Name me.")
    item = page.panel.list.item(0)
    item.setText("Lighthouse notes")  # what the inline editor commits
    assert _store().list().conversations[0].title == "Lighthouse notes"
    assert page.panel.list.item(0).text() == "Lighthouse notes"
    page.panel.list.setCurrentRow(0)
    qtbot.keyClick(page.panel.list, Qt.Key.Key_Delete)  # type: ignore[no-untyped-call]
    box = _confirm_box(window)
    assert "Lighthouse notes" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert len(_store().list().conversations) == 1
    page.panel.delete_button.click()
    next(b for b in _confirm_box(window).buttons() if b.text() == "Delete").click()
    assert _store().list().conversations == () and page.panel.list.count() == 0


def test_a_conversation_from_another_window_is_listed_on_show(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    send(qtbot, window, "Mine.")
    root = window.library.root
    other = _store()  # another window's
    theirs = other.save(
        replace(new_conversation(root / "qwen3-target", root / "qwen3-draft-noisy"), title="Theirs")
    )
    window.show_page("pair")
    window.show_page("chat")
    # Listed off the GUI thread: it arrives shortly after the page shows.
    qtbot.waitUntil(lambda: page.panel.list.count() == 2)
    assert [page.panel.list.item(i).text() for i in range(2)] == [theirs.title, "Mine."]


def test_switching_pair_keeps_the_old_conversation_and_clears_the_charts(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.mode.setCurrentIndex(1)
    send(qtbot, window, "Plain first.")
    page.mode.setCurrentIndex(0)
    send(qtbot, window, "Then speculative.")
    assert page.charts.reference_tok_s and page.charts.accepted_length.count
    assert page.charts.per_position()
    _choose(qtbot, window, "qwen3-draft-identical")
    assert page.transcript.messages == []
    assert page.charts.reference_tok_s is None
    assert page.charts.speed.count == page.charts.accepted_length.count == 0
    assert page.charts.per_position() == []
    # Kept, and where: another pair's conversations are listed with All pairs.
    assert "previous one is kept: tick All pairs to see it" in page.chat_note.text()
    assert page.chat_note.isVisible()
    assert page.panel.list.count() == 0  # this pair has none yet
    page.panel.all_pairs.setChecked(True)
    assert page.panel.list.item(0).text() == "Plain first."
    (old,) = _store().list().conversations
    assert len(old.messages) == 4 and old.draft and old.draft.endswith("qwen3-draft-noisy")
    # Opening it brings its pair back, once asked.
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    _press(_choice_box(window), SWITCH)
    assert window.selection.draft == window.library.root / "qwen3-draft-noisy"
    assert len(page.transcript.messages) == 4
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    send(qtbot, window, "Back again.")
    assert len(_store().list().conversations[0].messages) == 6


def test_plain_mode_chats_with_the_target_of_a_blocked_pair(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    _choose(qtbot, window, "qwen35-draft", state=ERROR)
    assert not page.send_button.isEnabled()
    reason = page.last_error
    assert "Choose Plain" in page.mode_note.text() and "cannot work" in page.mode_note.toolTip()
    page.mode.setCurrentIndex(1)
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    assert page.bridge.load_request is not None and page.bridge.load_request.draft is None
    assert "target alone" in page.mode_note.text() and page.send_button.isEnabled()
    # The header's reason is gone with the error: the note keeps it, one click away.
    assert "Why?" in page.mode_note.text() and "vocabularies" not in page.mode_note.text()
    page.mode_note.linkActivated.emit(WHY_LINK)
    assert escape(reason) in page.mode_note.text() and "Hide" in page.mode_note.text()
    send(qtbot, window, "Only the target.")
    assert page.transcript.messages[-1].stats is not None
    assert page.transcript.messages[-1].stats["mode"] == "plain"
    page.mode.setCurrentIndex(0)  # the pair again: refused again, with the reason
    qtbot.waitUntil(lambda: page.bridge.state == ERROR, timeout=30_000)
    assert "cannot work" in page.state_label.text() and not page.send_button.isEnabled()


def test_export_starts_in_documents_then_the_last_folder(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    page = window.chat_page
    assert page.exporter.start_path("chat.json") == str(documents_folder() / "chat.json")
    assert documents_folder().is_dir()  # a missing folder would open the current one
    send(qtbot, window, "Export me.")
    page.export_markdown(tmp_path / "out" / "chat.md")
    assert (tmp_path / "out" / "chat.md").is_file()
    assert page.exporter.start_path("charts.png") == str(tmp_path / "out" / "charts.png")


def _delete_chosen(window: MainWindow, row: int = 0) -> None:
    page = window.chat_page
    page.panel.list.setCurrentRow(row)
    page.panel.delete_button.click()
    next(b for b in _confirm_box(window).buttons() if b.text() == "Delete").click()


def test_deleting_the_open_conversation_leaves_an_empty_chat_and_never_brings_it_back(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    send(qtbot, window, "Forget me.")
    (gone,) = _store().list().conversations
    _delete_chosen(window)
    assert page.transcript.messages == [] and "Forget me" not in page.transcript.toPlainText()
    assert "deleted" in page.chat_note.text() and page.chat_note.isVisible()
    send(qtbot, window, "A fresh start.")
    (fresh,) = _store().list().conversations
    assert fresh.id != gone.id and [m.role for m in fresh.messages] == ["user", "assistant"]
    assert not _store().path(gone.id).exists()
    assert [page.panel.list.item(i).text() for i in range(page.panel.list.count())] == [
        "A fresh start."
    ]


def test_a_conversation_deleted_by_another_window_is_saved_as_a_new_one(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    send(qtbot, window, "Open in two windows.")
    (shared,) = _store().list().conversations
    _store().delete(shared.id)  # the other window deletes it
    send(qtbot, window, "Still here?")
    (kept,) = _store().list().conversations
    assert kept.id != shared.id and len(kept.messages) == 4
    assert not _store().path(shared.id).exists()
    assert "deleted elsewhere" in page.panel.note.text()


def test_no_delete_while_a_reply_is_written(window: MainWindow, qtbot: QtBot) -> None:
    page = window.chat_page
    send(qtbot, window, "First.")
    page.panel.list.setCurrentRow(0)
    assert page.panel.delete_button.isEnabled()
    page.max_tokens.setValue(400)
    page.input.setPlainText("A long one.")
    page.send()
    assert page.bridge.state == GENERATING
    assert not page.panel.delete_button.isEnabled() and not page.panel.rename_button.isEnabled()
    page.stop()
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    assert page.panel.delete_button.isEnabled()


def _choice_box(window: MainWindow) -> QMessageBox:
    boxes = window.chat_page.findChildren(QMessageBox, "choiceDialog")
    (box,) = [b for b in boxes if b.isVisible()]
    return box


def _press(box: QMessageBox, words: str) -> None:
    next(b for b in box.buttons() if b.text() == words).click()


def _plain_chat_with_a_blocked_pair(window: MainWindow, qtbot: QtBot) -> None:
    """A Plain chat held with qwen3-target + qwen35-draft, then the noisy pair chosen."""
    page = window.chat_page
    _choose(qtbot, window, "qwen35-draft", state=ERROR)
    page.mode.setCurrentIndex(1)
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    send(qtbot, window, "Blocked but plain.")
    _choose(qtbot, window, "qwen3-draft-noisy")
    page.panel.all_pairs.setChecked(True)


def test_plain_for_a_blocked_pair_does_not_carry_over_unsaid(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    _plain_chat_with_a_blocked_pair(window, qtbot)
    assert page.mode_choice.name == "speculative"
    assert SPECULATIVE_AGAIN in page.chat_note.text() and page.chat_note.isVisible()
    assert page.bridge.load_request is not None and page.bridge.load_request.draft


def test_opening_another_pairs_conversation_asks_and_restores_its_mode(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    root = window.library.root
    _plain_chat_with_a_blocked_pair(window, qtbot)
    page.sampling.choice.setCurrentIndex(RECIPE_INDEX)  # the chat was greedy
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    box = _choice_box(window)
    assert "qwen35-draft" in box.text() and "whole app" in box.text()
    assert window.selection.draft == root / "qwen3-draft-noisy"  # nothing changed yet
    assert page.transcript.messages == []
    _press(box, SWITCH)
    assert window.selection.draft == root / "qwen35-draft"
    assert "Pair switched" in page.chat_note.text() and page.chat_note.isVisible()
    assert page.mode_choice.name == "plain" and page.sampling.greedy_chosen
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    assert page.bridge.load_request is not None and page.bridge.load_request.draft is None
    assert page.send_button.isEnabled()
    send(qtbot, window, "Still plain.")
    stats = page.transcript.messages[-1].stats
    assert stats is not None and stats["mode"] == "plain" and len(page.transcript.messages) == 4


def test_another_pairs_conversation_can_be_read_without_changing_the_pair(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    root = window.library.root
    _plain_chat_with_a_blocked_pair(window, qtbot)
    page.panel.all_pairs.setChecked(False)  # the read one is listed even so
    page.new_button.click()  # a Speculative chat with the current pair...
    page.panel.all_pairs.setChecked(True)
    (held,) = _store().list().conversations
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    box = _choice_box(window)
    # The held pair cannot work together: the question says Plain is all it can run.
    assert "cannot work together" in box.text() and "only run Plain" in box.text()
    page.panel.all_pairs.setChecked(False)
    _press(box, READ_ONLY)
    assert window.selection.draft == root / "qwen3-draft-noisy"
    assert "Blocked but plain." in page.transcript.toPlainText()
    assert "Read only" in page.chat_note.text() and "regenerate:" not in page.transcript.toHtml()
    # ...the list marks the one on screen, which Rename and Delete act on, and the mode
    # box shows the mode it was held in (Plain), not the current pair's.
    current = page.panel.list.currentItem()
    assert current is not None and page.panel.conversation_at(current) == held
    assert page.panel.all_pairs.isChecked() and page.panel.rename_button.isEnabled()
    assert page.mode.currentText() == "Plain" and not page.mode.isEnabled()
    assert "in Plain mode" in page.chat_note.text()
    assert page.bridge.state == READY and not page.send_button.isEnabled()
    page.input.setPlainText("Sent anyway?")
    page.send()
    assert len(page.transcript.messages) == 2
    page.new_button.click()
    assert page.send_button.isEnabled() and page.transcript.messages == []
    assert page.mode.currentText() == "Speculative" and page.mode.isEnabled()


def test_a_read_conversation_deleted_from_the_list_leaves_the_screen(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    _plain_chat_with_a_blocked_pair(window, qtbot)
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    _press(_choice_box(window), READ_ONLY)
    _delete_chosen(window, page.panel.list.currentRow())
    assert page.transcript.messages == [] and page.opening.reading is None
    assert _store().list().conversations == ()


def _saved_reply(index: int) -> tuple[SavedMessage, SavedMessage]:
    speculative = index % 2 == 0
    stats: dict[str, object] = {
        "mode": "speculative" if speculative else "plain",
        "tokens": 40,
        "tok_s": 200.0 + index,
        "decode_seconds": 0.2,
        "drafted": 9 if speculative else 0,
        "acceptance": 0.5 if speculative else None,
        "mean_accepted_length": 2.5 if speculative else 1.0,
        "position_reached": [3, 2, 1] if speculative else [],
        "position_accepted": [2, 1, 0] if speculative else [],
        "sampler": "greedy",
    }
    return (
        SavedMessage("user", ((f"Question {index}", False),)),
        SavedMessage(
            "assistant",
            ((f"Answer {index}. " * 30, False),),
            mode=str(stats["mode"]),
            stopped_by="eos",
            stats=stats,
        ),
    )


def test_a_reopened_conversation_shows_its_figures_and_its_last_reply(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    root = window.library.root
    messages = tuple(m for i in range(12) for m in _saved_reply(i))
    _store().save(
        new_conversation(root / "qwen3-target", root / "qwen3-draft-noisy").with_messages(messages)
    )
    window.show_page("pair")
    window.show_page("chat")
    qtbot.waitUntil(lambda: page.panel.list.count() == 1)
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    assert page.charts.reply_speed.count == 12
    assert page.charts.acceptance.count == page.charts.accepted_length.count == 6
    assert page.charts.per_position() == [2 / 3, 1 / 2, 0.0]
    assert page.charts.reference_tok_s == 211.0  # the last plain reply's
    bar = page.transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    assert bar.value() == bar.maximum()


def test_export_adds_the_chosen_extension_says_where_and_remembers_the_folder(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """A native file dialog cannot be driven offscreen: these feed export_to and
    save_charts_to what the dialog answers (the typed name, the chosen filter), the
    path the Export and Save Charts buttons take after it."""
    page = window.chat_page
    send(qtbot, window, "Export me.")
    page.exporter.export_to(str(tmp_path / "lighthouse"), MARKDOWN_FILTER)
    assert (tmp_path / "lighthouse.md").read_text().startswith("# DraftDeck chat")
    assert not (tmp_path / "lighthouse").exists()
    assert str(tmp_path / "lighthouse.md") in page.chat_note.text() and page.chat_note.isVisible()
    page.exporter.export_to(str(tmp_path / "notes"), JSON_FILTER)
    assert json.loads((tmp_path / "notes.json").read_text())["messages"]
    page.exporter.export_to(str(tmp_path / "kept.MD"), JSON_FILTER)  # a typed one wins
    assert (tmp_path / "kept.MD").read_text().startswith("# DraftDeck chat")
    page.exporter.save_charts_to(str(tmp_path / "charts"))
    assert (tmp_path / "charts.png").stat().st_size > 0 and "charts.png" in page.chat_note.text()
    page.exporter.export_to("", JSON_FILTER)  # Cancel
    window.close()  # the window's settings are saved: the next window starts there
    assert load_settings().export_folder == str(tmp_path)
    assert ChatExport(page, page.run_record, page.charts, page.say, load_settings()).start_path(
        "chat.json"
    ) == str(tmp_path / "chat.json")


def _recipe_question(window: MainWindow) -> QMessageBox:
    boxes = window.findChildren(QMessageBox, "choiceDialog")
    (box,) = [b for b in boxes if b.isVisible() and "unsaved changes" in b.text()]
    return box


def test_switch_pair_under_unsaved_recipe_edits_asks_before_the_pair_changes(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    root = window.library.root
    send(qtbot, window, "Plain first.")
    _choose(qtbot, window, "qwen3-draft-identical")
    window.show_page("recipes")
    threads = window.recipes_page.draft_editor.editors["thread_num"]
    assert isinstance(threads, NumberEditor)
    spin = threads.spin
    assert isinstance(spin, QSpinBox)  # thread_num is a whole number
    spin.setValue(spin.value() % 4 + 1)  # unsaved, in the pair in use's
    assert window.recipes_page.has_unsaved()
    window.show_page("chat")
    page.panel.all_pairs.setChecked(True)
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    _press(_choice_box(window), SWITCH)
    # Asked now; Cancel keeps the pair in use and the conversation shown.
    _press(_recipe_question(window), "Cancel")
    assert window.selection.draft == root / "qwen3-draft-identical"
    assert page.transcript.messages == [] and window.recipes_page.has_unsaved()
    page.panel.list.itemClicked.emit(page.panel.list.item(0))
    _press(_choice_box(window), SWITCH)
    _press(_recipe_question(window), "Discard and Switch")
    assert window.selection.draft == root / "qwen3-draft-noisy"
    assert len(page.transcript.messages) == 2 and not window.recipes_page.has_unsaved()
