"""Chat's Adaptive drafting switch: on by default, a click kept in the draft pack's own
DraftDeck file (never in the recipes MNN reads), the next reply drafting as it says, and
the draft read again (a pair chosen) starting as the click left it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.recipe.drafting_settings import DRAFTING_FILE
from tests.helpers.windows import chat_window, send

PAIR = ("fast-target", "fast-draft")


def _stats(window: object) -> dict[str, object]:
    stats = window.chat_page.transcript.messages[-1].stats  # type: ignore[attr-defined]
    assert isinstance(stats, dict)
    return stats


def test_the_switch_drafts_the_next_reply_and_is_kept_for_the_draft(
    qtbot: QtBot, bundle_copy: Callable[..., Path]
) -> None:
    with chat_window(qtbot, bundle_copy, PAIR) as window:
        page = window.chat_page
        draft = page.loaded_pair[1]
        assert draft is not None and page.adaptive.isChecked()  # on by default
        assert not (draft / DRAFTING_FILE).exists()  # a default is not written down
        recipe = (draft / "config_cpu.json").read_bytes()
        page.adaptive.click()
        assert json.loads((draft / DRAFTING_FILE).read_text())["adaptive"] is False
        assert (draft / "config_cpu.json").read_bytes() == recipe  # MNN's recipe untouched
        send(qtbot, window, "Tell me about lighthouses.")
        stats = _stats(window)
        assert stats["drafting"] == "fixed" and stats["asides"] == 0
        assert stats["drafted"] == stats["draft_length"] * stats["rounds"]  # type: ignore[operator]

        page.adaptive.click()
        assert json.loads((draft / DRAFTING_FILE).read_text())["adaptive"] is True
        send(qtbot, window, "And about storms.")
        assert _stats(window)["drafting"] == "adaptive"
        # The draft read again (as when its pair is chosen) starts as the click left it.
        page.adaptive.setChecked(False)
        page.drafting.read(draft)
        assert page.adaptive.isChecked()
        page.mode.setCurrentIndex(1)  # Plain: nothing drafts, the switch is off
        assert not page.adaptive.isEnabled()
        page.mode.setCurrentIndex(0)
        assert page.adaptive.isEnabled()
