"""A new user's way through the window with packs exported by MNN's own exporter at each
release era (tests/fixtures/README.md, "Era bundles"): the Library lists and describes
them, the Pair page pairs a 2025 target with a 2026 draft, Chat runs on them (the real
Qwen3 vocabulary in the 3.1.x format folds its thinking and stops by itself), and the
Recipes page applies the TokForge-shaped pack's own advice."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from html import escape
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextCursor, QTextTable, QTextTableCell
from PySide6.QtWidgets import QApplication, QMessageBox, QTextBrowser
from pytestqt.qtbot import QtBot

from app.ui.base.engine_bridge import READY, STOPPED
from app.ui.library.library_model import COLUMNS
from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_fields import ChoiceEditor, NumberEditor
from app.ui.shell.main_window import MainWindow
from tests.helpers.smollm_3_1 import make_smollm_3_1
from tests.helpers.tokforge import TOKFORGE_NOTES
from tests.helpers.windows import add_packs, chat_window, open_on_page, open_window, send

Copy = Callable[..., Path]
LOAD = 60_000  # ms: the real-vocabulary pair loads 45 MB of bundles into the worker
REPLY = 60_000

# What the Library shows of each era bundle: export format label, what DraftDeck had to
# infer (row name -> the start of its value), role, family, layers, vocabulary rows.
QWEN3_INFERRED = "qwen3, inferred from the Qwen tokenizer"
ERAS: dict[str, dict[str, Any]] = {
    "era-3.1.4": {
        "label": "MNN exporter 3.1.x (2025-04)",
        "inferred": {
            "Inferred model type": QWEN3_INFERRED,
            "Inferred chat template": "rendered",
            "Inferred embedding": "embeddings_bf16.bin counted as a copy of the lm_head",
        },
        "role": "either",
        "layers": "2",
        "vocab": "1,280",
    },
    "era-3.3.0": {
        "label": "MNN exporter 3.3.x (2025-10)",
        "inferred": {"Inferred model type": QWEN3_INFERRED},
        "role": "either",
        "layers": "2",
        "vocab": "1,280",
    },
    "era-3.4.1": {
        "label": "MNN exporter 3.4.x (2026-03)",
        "inferred": {"Inferred layers": "2: "},
        "role": "either",
        "layers": "2",
        "vocab": "1,280",
    },
    "era-3.6.1": {
        "label": "MNN exporter 3.6.x (2026-07)",
        "inferred": {},
        "role": "either",
        "layers": "2",
        "vocab": "1,280",
    },
    "era-3.4.1-tokforge": {
        "label": "MNN exporter 3.4.x (2026-03)",
        "inferred": {"Inferred layers": "2: "},
        "role": "draft",
        "layers": "2",
        "vocab": "1,280",
    },
    "era-3.1.4-realtok": {
        "label": "MNN exporter 3.1.x (2025-04)",
        "inferred": {
            "Inferred model type": QWEN3_INFERRED,
            "Inferred chat template": "rendered",
            "Inferred embedding": "embeddings_bf16.bin counted as a copy of the lm_head",
        },
        "role": "either",
        "layers": "1",
        "vocab": "151,936",
    },
}

# The realtok chain (tests/fixtures/README.md, qwen3-realtok and era-3.1.4-realtok).
THOUGHT = "Okay, a short answer is enough."
ANSWER = "Hello! 你好 👋"
SAME_MEANING = "every token id means the same text in both"


def _cell(window: MainWindow, row: int, column: str) -> str:
    return str(window.library_page.proxy.index(row, COLUMNS.index(column)).data())


def _row_of(window: MainWindow, name: str) -> int:
    rows = range(window.library_page.proxy.rowCount())
    return next(r for r in rows if _cell(window, r, "Name") == name)


def _cell_text(cell: QTextTableCell) -> str:
    cursor = cell.firstCursorPosition()
    cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
    return cursor.selectedText()


def _details_rows(details: QTextBrowser) -> dict[str, str]:
    """The details panel's first table (what was read from the bundle) as row -> value."""
    table = next(
        frame
        for frame in details.document().rootFrame().childFrames()
        if isinstance(frame, QTextTable)
    )
    return {
        _cell_text(table.cellAt(row, 0)): _cell_text(table.cellAt(row, 1))
        for row in range(table.rows())
    }


def _dialogs() -> list[str]:
    return [
        w.text()
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.isVisible()
    ]


# -- Library -------------------------------------------------------------------------------


@pytest.fixture
def library(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The window on the Library page with every era bundle installed."""
    with open_window(qtbot) as window:
        add_packs(window, bundle_copy, ERAS)
        yield window


def test_every_era_is_listed_as_usable(library: MainWindow) -> None:
    names = [_cell(library, r, "Name") for r in range(library.library_page.proxy.rowCount())]
    assert sorted(names) == sorted(ERAS)
    for name, era in ERAS.items():
        row = _row_of(library, name)
        assert _cell(library, row, "Status") == "OK", name
        inferred = "Inferred model type" in era["inferred"]  # and shown as a guess
        assert _cell(library, row, "Family") == "qwen3" + (" (inferred)" if inferred else "")
        assert _cell(library, row, "Role") == era["role"], name
        assert _cell(library, row, "Vocab") == era["vocab"], name
    assert f"{len(ERAS)} packs" in library.statusBar().currentMessage()
    assert _dialogs() == []


@pytest.mark.parametrize("name", sorted(ERAS))
def test_details_say_the_export_format_and_what_was_inferred(
    library: MainWindow, name: str
) -> None:
    era = ERAS[name]
    library.library_page.select_path(library.library.root / name)
    rows = _details_rows(library.library_page.details)
    assert rows["Status"] == "OK"
    assert rows["Model type"].startswith(era["inferred"].get("Inferred model type", "qwen3"))
    assert rows["Layers"] == era["layers"]
    assert rows["Vocabulary rows"] == era["vocab"]
    assert rows["Export format"].startswith(f"{era['label']}: ")
    inferred = {row: value for row, value in rows.items() if row.startswith("Inferred ")}
    assert sorted(inferred) == sorted(era["inferred"])
    for row, start in era["inferred"].items():
        assert inferred[row].startswith(start), (row, inferred[row])


def test_a_pack_whose_templates_mark_no_turns_says_so_in_its_details(
    qtbot: QtBot, bundle_copy: Copy
) -> None:
    """A 3.1.x SmolLM2-shaped pack (bare `%s` templates): its details say replies will
    not stop and which chat format its tokenizer implies; a 3.1.x Qwen pack's do not."""
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, ["era-3.1.4"])
        make_smollm_3_1(bundle_copy("era-3.1.4", root / "smol"))
        window.library_page.refresh()
        qtbot.waitUntil(lambda: window.library_page.proxy.rowCount() == 2)
        window.library_page.select_path(root / "smol")
        rows = _details_rows(window.library_page.details)
        assert "replies will not stop by themselves" in rows["Turn markers"]
        assert "imply ChatML" in rows["Turn markers"]
        window.library_page.select_path(root / "era-3.1.4")
        assert "Turn markers" not in _details_rows(window.library_page.details)


# -- Pair ----------------------------------------------------------------------------------


@pytest.fixture
def pair_window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as window:
        add_packs(
            window,
            bundle_copy,
            ["era-3.1.4", "era-3.4.1-tokforge", "era-3.1.4-realtok", "qwen3-realtok"],
        )
        window.show_page("pair")
        yield window


def _choose(window: MainWindow, target: str, draft: str) -> str:
    """Choose the pair on the Pair page; the card's body (checked to be the pair's)."""
    page, root = window.pair_page, window.library.root
    page.choose(root / target, root / draft)
    chosen = page.current()
    assert [entry.name if entry else None for entry in chosen] == [target, draft]
    assert page.card.isVisible()
    title = page.card.title.text()
    assert title.startswith(("✓", "⚠")), title  # compatible (not blocked, can pay)
    return page.card.body.text()


def test_a_2025_target_pairs_with_the_tokforge_draft_and_shows_its_notes(
    pair_window: MainWindow,
) -> None:
    body = _choose(pair_window, "era-3.1.4", "era-3.4.1-tokforge")
    # Both are tokenizer.txt, with other headers (the eras list special ids differently).
    assert f"The tokenizer files are stored differently, but {SAME_MEANING}." in body
    assert (
        "The pack recommends: Target backend OpenCL, Draft backend CPU, Draft length 3, "
        "Draft threads 2, Draft power mode high, Draft sampler greedy." in body
    )
    for note in TOKFORGE_NOTES:
        assert escape(f"The pack's authors note: {note}") in body
    assert "_comment" not in body
    assert _dialogs() == []


def test_tokenizer_txt_target_pairs_with_tokenizer_mtok_draft(pair_window: MainWindow) -> None:
    body = _choose(pair_window, "era-3.1.4-realtok", "qwen3-realtok")
    assert (
        "The tokenizer files are stored in different formats (tokenizer.txt, "
        f"tokenizer.mtok), but {SAME_MEANING}." in body
    )
    assert "vocabularies" not in body  # 151,936 rows on both sides
    page = pair_window.pair_page
    target, draft = page.current()
    assert target is not None and draft is not None
    assert not page.matrix_model.verdict(target, draft).blocked
    assert _dialogs() == []


# -- Chat ----------------------------------------------------------------------------------


@pytest.fixture
def chat(qtbot: QtBot, bundle_copy: Copy) -> Iterator[Callable[[str, str], MainWindow]]:
    """Opens the window on the Chat page with this pair (desktop recipes), loaded and set
    to greedy; closed after the test."""
    with ExitStack() as opened:

        def open_chat(target: str, draft: str) -> MainWindow:
            chat = chat_window(qtbot, bundle_copy, (target, draft), timeout=LOAD)
            return opened.enter_context(chat)

        yield open_chat


def _send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    send(qtbot, window, text, timeout=REPLY)
    assert window.chat_page.last_error == "", window.chat_page.last_error


def test_real_vocabulary_2025_target_folds_thinking_and_stops_by_itself(
    chat: Callable[[str, str], MainWindow], qtbot: QtBot
) -> None:
    window = chat("era-3.1.4-realtok", "qwen3-realtok")
    page = window.chat_page
    page.max_tokens.setValue(200)  # far more than the chain: only a stop token ends it
    _send(qtbot, window, "Hi")
    user, reply = page.transcript.messages
    assert user.text == "Hi"
    assert reply.stopped_by == "stop_token"
    assert reply.thinking_text.strip() == THOUGHT
    assert reply.text.strip() == ANSWER
    shown = page.transcript.toPlainText()
    assert "▸ Thinking" in shown and THOUGHT not in shown  # folded
    assert ANSWER in shown and "<think>" not in shown and "<|" not in shown
    stats = reply.stats
    assert stats is not None and stats["mode"] == "speculative"
    assert stats["tokens"] < 200
    # The same chain on both sides: the draft's tokens are accepted.
    assert stats["acceptance"] >= 0.9, stats["acceptance"]
    assert f"acceptance {stats['acceptance']:.2f}" in shown  # the figures under the reply
    # The user opens the fold: the thought is there.
    page.transcript.anchorClicked.emit(QUrl("think:1"))
    shown = page.transcript.toPlainText()
    assert "▾ Thinking" in shown and THOUGHT in shown
    assert _dialogs() == []


def test_a_3_1_target_with_a_llmexport_draft_chats_to_the_end(
    chat: Callable[[str, str], MainWindow], qtbot: QtBot
) -> None:
    window = chat("era-3.1.4", "qwen3-draft-identical")
    page = window.chat_page
    page.max_tokens.setValue(40)
    _send(qtbot, window, "Hello.")
    reply = page.transcript.messages[-1]
    assert reply.stopped_by in ("stop_token", "max_tokens"), reply.stopped_by
    stats = reply.stats
    assert stats is not None and stats["mode"] == "speculative" and stats["tokens"] > 0
    assert stats["from_draft"] + stats["corrections"] == stats["tokens"]
    assert reply.text.strip()
    assert page.last_error == "" and page.send_button.isEnabled()
    assert _dialogs() == []


def test_closing_the_window_as_engine_events_arrive_shows_no_crash(
    qtbot: QtBot, bundle_copy: Copy
) -> None:
    """The worker's reader thread cues a drain after each event; a drain still queued
    when the window closes found the closed worker's exit and showed 'The engine worker
    exited with code 0' over the next window (seen after this file's chats)."""
    with open_on_page(qtbot, bundle_copy, ("era-3.1.4", "qwen3-draft-identical"), "chat") as window:
        bridge = window.chat_page.bridge
        qtbot.waitUntil(lambda: bridge.state == READY, timeout=LOAD)
        listener = bridge.client.on_event
        assert listener is not None
        cue = threading.Thread(target=listener)  # an event arrives as the window closes
        cue.start()
        cue.join()
    qtbot.waitUntil(lambda: not bridge._drain_queued.is_set(), timeout=REPLY)  # it ran
    assert bridge.state == STOPPED
    assert _dialogs() == []


# -- Recipes -------------------------------------------------------------------------------

TOKFORGE = "era-3.4.1-tokforge"
USED, TWIN = "config_cpu.json", "draft_config_cpu.json"


@pytest.fixture
def recipes(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    """The Recipes page on 3.1.4 target + TokForge-shaped draft, whose two draft recipes
    (still the same recipe) were once set unlike the pack's advice."""
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, ["era-3.1.4", TOKFORGE])
        for name in (USED, TWIN):
            path = root / TOKFORGE / name
            data = json.loads(path.read_text(encoding="utf-8"))
            data.update(thread_num=4, power="normal", sampler_type="mixed")
            path.write_text(json.dumps(data, indent=4), encoding="utf-8")
        window.show_page("pair")
        window.pair_page.choose(root / "era-3.1.4", root / TOKFORGE)
        window.show_page("recipes")
        yield window
        window._closing_anyway = True  # an unsaved edit must not stop the teardown


def _field(editor: RecipeEditor, key: str) -> str:
    field = editor.editors[key]
    if isinstance(field, NumberEditor):
        return str(field.spin.value())
    assert isinstance(field, ChoiceEditor)
    return field.combo.currentText()


def test_the_tokforge_pack_says_which_recipe_runs_and_its_preset_applies(
    recipes: MainWindow,
) -> None:
    page, pack = recipes.recipes_page, recipes.library.root / TOKFORGE
    rule = page.draft_twins.rule
    assert rule.isVisible()
    assert rule.text() == (
        f"DraftDeck runs the draft with {USED}: when a pack has both, always that one. "
        f"The pack's {TWIN} holds the same recipe: saving writes both in step."
    )
    assert page.draft_editor.path == pack / USED
    assert page.preset_combo.currentText() == "The pack's recommendation"
    assert page.preset_combo.toolTip().startswith(f"{TOKFORGE}'s own recommendation")
    draft, target = page.draft_editor, page.target_editor
    assert [_field(draft, k) for k in ("thread_num", "power", "sampler_type")] == [
        "4",
        "normal",
        "mixed",
    ]
    page.act_preset.trigger()
    assert [_field(draft, k) for k in ("thread_num", "power", "sampler_type")] == [
        "2",
        "high",
        "greedy",
    ]
    assert target.data["draft_predict_length"] == 3
    page.act_save.trigger()
    for name in (USED, TWIN):  # both files, in step
        saved = json.loads((pack / name).read_text(encoding="utf-8"))
        assert (saved["thread_num"], saved["power"], saved["sampler_type"]) == (
            2,
            "high",
            "greedy",
        ), name
    assert _dialogs() == []
