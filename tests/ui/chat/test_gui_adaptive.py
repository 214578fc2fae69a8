"""Chat's Adaptive drafting switch: on by default, a click kept in the draft pack's own
DraftDeck file (never in the recipes MNN reads), the next reply drafting as it says, and
the draft read again (a pair chosen) starting as the click left it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.recipe.drafting_settings import DRAFTING_FILE
from tests.helpers.engine_events import rounds_event
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


def test_judgements_are_said_as_the_reply_streams(
    qtbot: QtBot, bundle_copy: Callable[..., Path]
) -> None:
    # The engine's words for a check on a busy computer and for a step-aside (as
    # drafting_check.Judgement.describe writes them), on the rounds that carry them.
    kept = (
        "drafting pays: 1.88x plain (1.70-2.05, 95 %, 6 speculative rounds by the CPU time "
        "they took); this computer was busy while it was judged (its steps took 2.5x as "
        "long as when quiet), so rounds were judged by the CPU time they took"
    )
    aside = "drafting did not pay: 0.50x plain; decoding plain for 333 tokens"
    with chat_window(qtbot, bundle_copy, PAIR) as window:
        page = window.chat_page
        send(qtbot, window, "Tell me about lighthouses.")  # the rounds land on a reply
        event = rounds_event(0.1, [1] * 3, [(3, 2, 2)])
        busy = replace(event, rounds=(replace(event.rounds[0], kept_note=kept),))
        page.bridge.rounds.emit(busy)
        assert page.chat_note.text() == f"D{kept[1:]}."
        stood = replace(event, rounds=(replace(event.rounds[0], note=aside),))
        page.bridge.rounds.emit(stood)
        assert page.chat_note.text() == f"Plain for now: {aside}."
