"""The pack's own advice in the window, on TokForge's real runtime_config.json: the
Pair card and the Recipes page's pack preset say every setting and note, and the
preset sets the recipe fields the pack means."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from html import escape
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess
from app.ui.pair.verdict_card import VerdictCard
from app.ui.recipes.recipe_fields import ChoiceEditor, NumberEditor
from app.ui.shell.main_window import MainWindow
from tests.helpers.tokforge import TOKFORGE_NOTES, as_known, tokforge_pack
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
PACK = "TokForge-AccelerationPack-Draft"
SETS = (
    "Target backend OpenCL, Draft length 3, Draft backend CPU, Draft threads 2, "
    "Draft power mode high, Draft sampler greedy"
)


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        root = add_packs(win, bundle_copy, ["fast-target"])
        pack = tokforge_pack(bundle_copy, root / PACK)
        # A recipe unlike the pack's advice, so that applying it changes each field.
        recipe = pack / "config_cpu.json"
        data = json.loads(recipe.read_text())
        data.update(thread_num=4, power="normal", sampler_type="mixed")
        recipe.write_text(json.dumps(data, indent=4))
        win.library_page.refresh()
        win.show_page("pair")
        win.pair_page.choose(root / "fast-target", pack)
        yield win


def test_the_pair_card_says_the_settings_and_every_note(window: MainWindow) -> None:
    body = window.pair_page.card.body.text()
    assert (
        "The pack recommends: Target backend OpenCL, Draft backend CPU, Draft length 3, "
        "Draft threads 2, Draft power mode high, Draft sampler greedy." in body
    )
    for note in TOKFORGE_NOTES:
        assert escape(f"The pack's authors note: {note}") in body
    assert "draft_thread_num" not in body and "_comment" not in body


def test_the_pack_preset_shows_its_notes_and_sets_the_right_fields(window: MainWindow) -> None:
    window.show_page("recipes")
    page = window.recipes_page
    assert page.preset_combo.currentText() == "The pack's recommendation"  # short: not cut
    assert page.preset_combo.toolTip().startswith(f"{PACK}'s own recommendation")
    assert page.preset_combo.itemData(0, Qt.ItemDataRole.ToolTipRole).startswith(
        f"{PACK}'s own recommendation\n"
    )
    assert page.preset_note.shown.text() == f"Sets: {SETS}."  # what Apply does, in view
    page.preset_note.more.click()
    for note in TOKFORGE_NOTES:
        assert f"The pack's authors note: {note}" in page.preset_note.shown.text()
    assert TOKFORGE_NOTES[0] in str(page.preset_combo.itemData(0, 3))  # ToolTipRole
    page.act_preset.trigger()
    draft, target = page.draft_editor, page.target_editor
    assert {k: draft.data[k] for k in ("backend_type", "thread_num", "power", "sampler_type")} == {
        "backend_type": "cpu",
        "thread_num": 2,
        "power": "high",
        "sampler_type": "greedy",
    }
    threads, power = draft.editors["thread_num"], draft.editors["power"]
    assert isinstance(threads, NumberEditor) and threads.spin.value() == 2
    assert isinstance(power, ChoiceEditor) and power.combo.currentText() == "high"
    assert target.data["draft_predict_length"] == 3 and target.data["backend_type"] == "opencl"
    page.save()
    saved = json.loads((window.library.root / PACK / "config_cpu.json").read_text())
    assert (saved["thread_num"], saved["power"], saved["sampler_type"]) == (2, "high", "greedy")


def test_a_target_the_pack_disables_shows_its_reason_on_the_card(
    qtbot: QtBot, fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    target = as_known(read_bundle(fixture_bundle("qwen3-target")), "qwen3_4b")
    verdict = assess(target, read_bundle(tokforge_pack(bundle_copy)))
    card = VerdictCard()
    qtbot.addWidget(card)
    card.show_verdict(verdict)
    assert card.title.text() == "⚠  Compatible, with warnings · target looks like Qwen3-4B"
    body = card.body.text()
    warnings = body[body.index("<b>Warnings</b>") : body.index("<b>Good to know</b>")]
    assert (
        escape("The pack's authors disable it for Qwen3-4B: Degenerates — KL trained from 8B ")
        + "teacher."
        in warnings
    )
