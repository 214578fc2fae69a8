"""The Chat page on a target whose prompt templates mark no turns (a 3.1.x export of a
model the exporter did not know): it says replies will not stop, and its button gives
the pack the ChatML its tokenizer implies, then reloads the pair."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.ui.base.engine_bridge import READY
from tests.helpers.windows import chat_window

TARGET, DRAFT = "era-3.1.4", "era-3.4.1"


def _bare_templates(root: Path) -> None:
    path = root / TARGET / "llm_config.json"
    config = json.loads(path.read_text())
    for role in ("system", "user", "assistant"):
        config[f"{role}_prompt_template"] = "%s"
    path.write_text(json.dumps(config))


def test_chat_flags_bare_templates_and_applies_chatml(
    qtbot: QtBot, bundle_copy: Callable[..., Path]
) -> None:
    with chat_window(qtbot, bundle_copy, (TARGET, DRAFT), prepare=_bare_templates) as window:
        page = window.chat_page
        note = page.turns
        qtbot.waitUntil(note.isVisible)
        assert "will not stop by themselves" in note.label.text()
        assert note.apply_button.text() == "Use ChatML"
        target = page.loaded_pair[0]
        assert target is not None
        note.apply_button.click()
        saved = json.loads((target / "config.json").read_text())
        assert saved["jinja"]["eos"] == "<|im_end|>"
        qtbot.waitUntil(lambda: page.bridge.state == READY and not note.isVisible(), timeout=60_000)
