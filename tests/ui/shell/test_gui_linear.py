"""A Qwen3.5 target with a Qwen3.5 draft in the window, offscreen, on real MNN 3.6.1:
the Pair page says it cannot pay, Chat starts in plain decoding and says why, and the
Tune page refuses to sweep it unless told to measure anyway."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.pack.verdict import LINEAR_CANNOT_PAY
from app.ui.base.background import wait_for_background
from app.ui.base.engine_bridge import READY
from app.ui.shell.main_window import MainWindow
from tests.helpers.engine_events import loaded_event
from tests.helpers.windows import add_packs, open_window, send

Copy = Callable[..., Path]
NORMAL = {"memory": "normal", "thread_num": 1}


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        root = win.library.root
        # The target: a copy of the Qwen3.5 draft without its draft recipe (an identical pair).
        target = bundle_copy("qwen35-draft", root / "qwen35-target")
        (target / "config_cpu.json").unlink()
        config = json.loads((target / "config.json").read_text())
        (target / "config.json").write_text(json.dumps({**config, **NORMAL}, indent=4))
        others = ("qwen35-draft", "qwen3-target", "qwen3-draft-noisy")
        add_packs(win, bundle_copy, others, desktop=True)
        win.show_page("pair")
        win.pair_page.choose(root / "qwen35-target", root / "qwen35-draft")
        yield win
        win.tune_sweeps.shutdown(timeout=2.0)
    wait_for_background(60_000)  # a sweep's last run may still be closing its worker


def _no_dialogs() -> bool:
    return not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]


def test_pair_page_says_it_cannot_pay(window: MainWindow) -> None:
    page = window.pair_page
    assert page.card.title.text().startswith(
        "⊘  Compatible, but speculation cannot pay on MNN 3.6.1"
    )
    assert "cannot beat plain decoding" in page.card.body.text()
    model = page.matrix_model
    targets = [e.name for e in model.targets]
    drafts = [e.name for e in model.drafts]
    cell = model.index(targets.index("qwen35-target"), drafts.index("qwen35-draft"))
    assert cell.data() == "⊘ cannot pay"


def test_chat_defaults_to_plain_and_says_why(window: MainWindow, qtbot: QtBot) -> None:
    window.show_page("chat")
    page = window.chat_page
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    assert page.mode.currentText() == "Plain"
    assert page.mode_note.isVisible()
    note = page.mode_note.text()
    assert LINEAR_CANNOT_PAY in note and "linear_rollback false" in note
    assert "\n" not in note

    def send_for_stats(text: str) -> dict[str, object]:
        send(qtbot, window, text)
        stats = page.transcript.messages[-1].stats
        assert stats is not None
        return stats

    page.max_tokens.setValue(20)
    assert send_for_stats("Hello there.")["mode"] == "plain"
    # The user may still pick Speculative: exact, just not faster.
    page.mode.setCurrentIndex(0)
    spec = send_for_stats("And again.")
    assert spec["mode"] == "speculative" and spec["acceptance"] == 1.0
    # The same pair loaded again (as after an engine restart) keeps the user's choice.
    loaded = loaded_event(cannot_pay=LINEAR_CANNOT_PAY, linear_rollback=False)
    page.show_pair_state(replace(page.bridge.pair_state, loaded=loaded))
    assert page.mode.currentText() == "Speculative" and page.mode_note.isVisible()

    # A pair that can gain gets Speculative back and loses the note.
    root = window.library.root
    window.show_page("pair")
    page.mode.setCurrentIndex(1)
    window.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    window.show_page("chat")
    qtbot.waitUntil(lambda: page.loaded_pair[0] == root / "qwen3-target", timeout=10_000)
    qtbot.waitUntil(lambda: page.bridge.state == READY, timeout=30_000)
    assert page.mode.currentText() == "Speculative"
    assert not page.mode_note.isVisible()
    # Where an MNN rolls the state back, the probe's yes is shown in the same place.
    page.show_pair_state(replace(page.bridge.pair_state, loaded=loaded_event(linear_rollback=True)))
    assert page.mode.currentText() == "Speculative"
    assert "linear_rollback true" in page.mode_note.text() and page.mode_note.isVisible()


def test_tune_refuses_unless_measured_anyway(window: MainWindow, qtbot: QtBot) -> None:
    window.show_page("tune")
    page = window.tune_page
    assert page.force.isVisible() and not page.force.isChecked()
    assert "linear attention" in page.pair_label.text()
    page.form.d_min.setValue(1)
    page.form.d_max.setValue(2)
    page.form.adaptive.setChecked(False)  # two settings are enough to show the marking
    page.form.tokens.setValue(16)
    page.form.budget.setValue(1)  # the refusal and the marking are the subject, not the figures
    page.form.min_run.setValue(0.0)
    page.form.prompts.setPlainText("Tell me about rivers.")
    page.start_button.click()
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=60_000)
    assert LINEAR_CANNOT_PAY in page.verdict.text() and "Measure anyway" in page.verdict.text()
    assert page.model.rowCount() == 0
    assert _no_dialogs()  # a refusal, told in place, not an error box

    page.force.setChecked(True)
    page.start_button.click()
    qtbot.waitUntil(lambda: page.start_button.isEnabled(), timeout=120_000)
    assert page.model.rowCount() == 2
    assert page.verdict.text().startswith(
        "Speculation cannot pay on this MNN: linear-attention state."
    )
    assert not page.apply_button.isEnabled()  # never a recipe to apply
    assert page.run is not None and page.run.cannot_pay == LINEAR_CANNOT_PAY
