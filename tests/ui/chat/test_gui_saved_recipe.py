"""What you save is what runs: a recipe saved while a pair is loaded reaches the next
reply, whichever page saved it, and an exported conversation names the pair and recipe
its replies were made with. Real widgets offscreen, the real engine worker on the
fixture bundles (core/recipe/key_timing.py says which keys need a reload)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.measure.chat_record import UNRECORDED_PAIR, UNRECORDED_RECIPE, PairRecipes
from app.core.measure.conversations import ConversationStore, SavedMessage, new_conversation
from app.core.recipe.desktop_settings import read_desktop
from app.engine.protocol import Generate, StopReason
from app.ui.base.engine_bridge import ERROR, READY
from app.ui.chat.chat_opening import READ_ONLY
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import chat_window, send

Copy = Callable[..., Path]
PAIR = ("qwen3-target", "qwen3-draft-identical")
OTHER_DRAFT = "qwen3-draft-noisy"


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with chat_window(qtbot, bundle_copy, PAIR, (OTHER_DRAFT,)) as win:
        win.chat_page.max_tokens.setValue(8)
        yield win


def _target_config(window: MainWindow) -> Path:
    return window.library.root / PAIR[0] / "config.json"


def _write_keys(path: Path, **keys: Any) -> None:
    """As another program (the CLI's recipe set, a text editor) saves a recipe."""
    path.write_text(json.dumps({**json.loads(path.read_text()), **keys}, indent=4))


def _ready(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.chat_page.bridge.state in (READY, ERROR), timeout=30_000)


def test_max_all_tokens_saved_on_the_recipes_page_is_the_next_replys_window(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    meter = page.context.meter
    assert meter.label.text() == "Context 0 / 2,048 tokens"  # as loaded
    send(qtbot, window, "Tell me about lighthouses.")
    first = page.transcript.messages[-1].stats
    assert first is not None and first["window_tokens"] == 2048
    used = first["prompt_tokens"] + first["tokens"]

    window.show_page("recipes")
    editor = window.recipes_page.target_editor
    data = json.loads(editor.json_edit.toPlainText())
    editor.json_edit.setPlainText(json.dumps({**data, "max_all_tokens": 120}, indent=4))
    window.recipes_page.act_save.trigger()
    assert json.loads(_target_config(window).read_text())["max_all_tokens"] == 120
    window.show_page("chat")
    # The pair loads again at once; the meter shows the new window, without New Chat.
    assert "max_all_tokens" in page.chat_note.text()
    _ready(qtbot, window)
    assert page.bridge.state == READY, page.last_error
    assert meter.label.text() == f"Context {used:,} / 120 tokens"
    assert len(page.transcript.messages) == 2  # the conversation goes on

    page.max_tokens.setValue(400)  # more than the window leaves
    send(qtbot, window, "And the keepers?")
    reply = page.transcript.messages[-1]
    assert reply.stats is not None and reply.stats["window_tokens"] == 120
    assert reply.stats["prompt_tokens"] + reply.stats["tokens"] == 120
    assert reply.stopped_by == StopReason.CONTEXT_FULL
    assert meter.label.text() == "Context 120 / 120 tokens (full)"


def test_load_time_keys_saved_while_chat_is_shown_reload_before_the_next_reply(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    loaded = page.bridge.pair_state.loaded
    assert loaded is not None and loaded.draft_length == 3
    _write_keys(_target_config(window), draft_predict_length=2, max_all_tokens=700)
    said: list[list[str]] = []
    page.bridge.reloading.connect(said.append)
    send(qtbot, window, "Tell me about lighthouses.")
    assert said == [["draft_predict_length", "max_all_tokens"]]
    loaded = page.bridge.pair_state.loaded
    assert loaded is not None and loaded.draft_length == 2 and loaded.window_tokens == 700
    stats = page.transcript.messages[-1].stats
    assert stats is not None and stats["window_tokens"] == 700 and stats["tokens"] == 8
    assert page.context.meter.label.text().endswith("/ 700 tokens")
    # Nothing changed since: the next reply runs on the same load.
    send(qtbot, window, "And the keepers?")
    assert said == [["draft_predict_length", "max_all_tokens"]]
    assert page.bridge.pair_state.loaded is loaded


def test_a_saved_sampler_key_reaches_the_next_reply_without_a_reload(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    page.sampling.choice.setCurrentIndex(0)  # the recipe's sampler
    loaded = page.bridge.pair_state.loaded
    asked: list[Generate] = []
    send_request = page.bridge.client.send

    def spy(request: Any) -> int:  # what the bridge sends the worker
        if isinstance(request, Generate):
            asked.append(request)
        return send_request(request)

    page.bridge.client.send = spy  # type: ignore[method-assign]
    said: list[list[str]] = []
    page.bridge.reloading.connect(said.append)
    _write_keys(_target_config(window), temperature=0.3)
    send(qtbot, window, "Tell me about lighthouses.")
    (request,) = asked
    assert request.sampler is not None and request.sampler.temperature == 0.3
    stats = page.transcript.messages[-1].stats
    assert stats is not None and "temperature 0.3" in str(stats["sampler"])
    assert said == [] and page.bridge.pair_state.loaded is loaded  # per reply: no reload


def test_a_saved_recipe_its_load_plan_refuses_fails_the_reply_and_a_fix_mends_it(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.chat_page
    _write_keys(_target_config(window), draft_predict_length=0)
    send(qtbot, window, "Tell me about lighthouses.", wait=False)
    # Refused before the engine is asked: said in the header, the reply marked failed.
    assert page.bridge.state == ERROR
    assert "draft length 0 is out of range (1 to 16)" in page.state_label.reason.text()
    reply = page.transcript.messages[-1]
    assert reply.role == "assistant" and reply.stopped_by == "error"
    assert not page.send_button.isEnabled()
    # Fixed elsewhere and Chat shown again: the pair loads with the fixed recipe.
    _write_keys(_target_config(window), draft_predict_length=2)
    window.show_page("library")
    window.show_page("chat")
    _ready(qtbot, window)
    assert page.bridge.state == READY, page.last_error
    loaded = page.bridge.pair_state.loaded
    assert loaded is not None and loaded.draft_length == 2
    assert page.send_button.isEnabled()


def _choose_draft(qtbot: QtBot, window: MainWindow, draft: str) -> None:
    root = window.library.root
    window.show_page("pair")
    window.pair_page.choose(root / PAIR[0], root / draft)
    window.show_page("chat")
    _ready(qtbot, window)


def _read_only(window: MainWindow, conversation_id: str) -> None:
    page = window.chat_page
    page.panel.all_pairs.setChecked(True)
    row = [c.id for c in page.panel.shown].index(conversation_id)
    page.panel.list.itemClicked.emit(page.panel.list.item(row))
    boxes = page.findChildren(QMessageBox, "choiceDialog")
    (box,) = [b for b in boxes if b.isVisible()]
    next(b for b in box.buttons() if b.text() == READ_ONLY).click()
    assert page.opening.reading is not None


def test_a_read_only_conversation_exports_the_pair_and_recipe_it_was_made_with(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    page = window.chat_page
    root = window.library.root
    target, draft = root / PAIR[0], root / PAIR[1]
    send(qtbot, window, "Tell me about lighthouses.")
    made_with = PairRecipes.read(target, draft)
    held = page.conversations.current
    assert held is not None and held.recipes == made_with.to_json()
    # The recipe changes after the reply, and another pair is chosen.
    _write_keys(draft / "config_cpu.json", note="saved after the reply")
    _choose_draft(qtbot, window, OTHER_DRAFT)
    _read_only(window, held.id)

    page.export_markdown(tmp_path / "chat.md")
    page.export_json(tmp_path / "chat.json")
    markdown = (tmp_path / "chat.md").read_text()
    assert f"- Target: `{target}`" in markdown and f"- Draft: `{draft}`" in markdown
    assert OTHER_DRAFT not in markdown and "saved after the reply" not in markdown
    exported = json.loads((tmp_path / "chat.json").read_text())
    assert exported["draft"] == str(draft) and exported["recipe"] == made_with.to_json()
    # The loaded pair's verify agreement is not this conversation's.
    assert exported["figures"]["verify_agreement"] is None


def test_an_old_conversation_without_its_recipe_says_so_rather_than_name_the_current(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    page = window.chat_page
    root = window.library.root
    store = ConversationStore(app_dirs().data / "conversations")
    reply = SavedMessage("assistant", (("It shines.", False),), stats={"tokens": 3})
    messages = (SavedMessage("user", (("Lighthouses?", False),)), reply)
    # Saved by a DraftDeck that recorded no recipes; the second names no pair at all.
    old = new_conversation(root / PAIR[0], root / OTHER_DRAFT).with_messages(messages)
    nameless = replace(new_conversation(root / PAIR[0], None), target="").with_messages(messages)
    for conversation in (old, nameless):
        store.save(conversation)
    page.panel.refresh()
    page.panel.all_pairs.setChecked(True)
    qtbot.waitUntil(lambda: page.panel.list.count() == 2)

    _read_only(window, old.id)
    page.export_markdown(tmp_path / "old.md")
    markdown = (tmp_path / "old.md").read_text()
    assert f"- Draft: `{root / OTHER_DRAFT}`" in markdown and PAIR[1] not in markdown
    assert UNRECORDED_RECIPE in markdown.lower() and "```json" not in markdown

    page.new_button.click()
    _read_only(window, nameless.id)
    page.export_json(tmp_path / "nameless.json")
    exported = json.loads((tmp_path / "nameless.json").read_text())
    assert exported["target"] is None and exported["draft"] is None
    assert exported["pair_note"] == UNRECORDED_PAIR
    assert exported["recipe"] is None and exported["recipe_note"] == UNRECORDED_RECIPE


def test_this_computer_s_settings_saved_on_the_recipes_page_reload_the_pair(
    window: MainWindow, qtbot: QtBot
) -> None:
    """What runs here is the recipe under this computer's settings: saving them reloads
    the pair as a recipe save does, and the phone's recipe is left as it is."""
    page = window.chat_page
    _ready(qtbot, window)
    recipe = _target_config(window).read_bytes()
    window.show_page("recipes")
    group = window.recipes_page.target_desktop
    threads = group.editors["thread_num"]
    threads.spin.setValue(2)  # type: ignore[attr-defined]
    window.recipes_page.act_save.trigger()
    assert read_desktop(window.library.root / PAIR[0]).of("config.json") == {"thread_num": 2}
    window.show_page("chat")
    assert "thread_num" in page.chat_note.text()
    _ready(qtbot, window)
    assert page.bridge.state == READY, page.last_error
    assert _target_config(window).read_bytes() == recipe
