"""The Recipes page on a draft with config_cpu.json and draft_config_cpu.json: the line
saying which runs, saving both in step, the diff and the choice when they differ."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QSpinBox
from pytestqt.qtbot import QtBot

from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_fields import NumberEditor
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

Copy = Callable[..., Path]
USED, ALT = "config_cpu.json", "draft_config_cpu.json"
DRAFT = "qwen3-draft-noisy"


def _read(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _open(qtbot: QtBot, bundle_copy: Copy, **changes: Any) -> MainWindow:
    """The window on the Recipes page, its draft a copy of the noisy draft with
    draft_config_cpu.json beside config_cpu.json: the same recipe spelt with a 2-space
    indent and keys reversed, plus `changes`."""
    win = create_main_window()
    root = win.library.root
    bundle_copy("qwen3-target", root / "qwen3-target")
    pack = bundle_copy(DRAFT, root / DRAFT)
    data = _read(pack / USED)
    twin = {key: data[key] for key in reversed(list(data))} | changes
    (pack / ALT).write_text(json.dumps(twin, indent=2) + "\n", encoding="utf-8")
    win.show()
    win.show_page("pair")
    win.pair_page.choose(root / "qwen3-target", pack)
    win.show_page("recipes")
    return win


@pytest.fixture
def windows(qtbot: QtBot, bundle_copy: Copy) -> Iterator[Callable[..., MainWindow]]:
    opened: list[MainWindow] = []

    def open_window(**changes: Any) -> MainWindow:
        opened.append(_open(qtbot, bundle_copy, **changes))
        return opened[-1]

    yield open_window
    for win in opened:
        win._closing_anyway = True  # unsaved test edits must not stop the teardown
        win.close()
        win.deleteLater()


def _pack(window: MainWindow) -> Path:
    return window.library.root / DRAFT


def _spin(editor: RecipeEditor, key: str) -> QSpinBox:
    field = editor.editors[key]
    assert isinstance(field, NumberEditor) and isinstance(field.spin, QSpinBox)
    return field.spin


def _box(name: str) -> QMessageBox:
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()
    ]
    assert len(boxes) == 1, [b.text()[:60] for b in boxes]
    return boxes[0]


def _click(box: QMessageBox, text: str) -> None:
    next(b for b in box.buttons() if b.text() == text).click()


def test_identical_recipes_are_saved_in_step(windows: Callable[..., MainWindow]) -> None:
    window = windows()
    page, pack = window.recipes_page, _pack(window)
    twins = page.draft_twins
    assert twins.rule.isVisible() and twins.rule.text().startswith(
        f"DraftDeck runs the draft with {USED}"
    )
    assert "holds the same recipe: saving writes both in step" in twins.rule.text()
    assert not twins.choice.isVisible()
    before = {name: (pack / name).read_bytes() for name in (USED, ALT)}

    _spin(page.draft_editor, "thread_num").setValue(1)
    page.act_save.trigger()
    assert _read(pack / USED) == _read(pack / ALT)
    assert _read(pack / ALT)["thread_num"] == 1
    assert (pack / ALT).read_text().startswith('{\n  "power"')  # its own spelling
    for name, old in before.items():
        assert (pack / f"{name}.bak").read_bytes() == old
    assert f"{DRAFT}/{USED} and {DRAFT}/{ALT}" in page.save_note.text()

    # Undo and save again: both go back in step; so does Reset to Pack Default.
    page.act_undo.trigger()
    page.act_save.trigger()
    assert _read(pack / USED) == _read(pack / ALT) == json.loads(before[USED])
    _spin(page.draft_editor, "thread_num").setValue(3)
    page.act_save.trigger()
    page.act_reset.trigger()
    box = _box("confirmDialog")
    assert f"{ALT} holds the same recipe and is reset with it" in box.text()
    _click(box, "Reset")
    assert (pack / USED).read_bytes() == before[USED]
    assert (pack / ALT).read_bytes() == before[ALT]


def test_reset_says_the_twin_is_the_same_only_when_it_is(
    windows: Callable[..., MainWindow],
) -> None:
    window = windows()
    page, pack = window.recipes_page, _pack(window)
    _spin(page.draft_editor, "thread_num").setValue(1)
    page.act_save.trigger()  # both files in step, each with its shipped original kept
    # Then another program changes the twin: the two differ now.
    (pack / ALT).write_text(json.dumps(_read(pack / ALT) | {"thread_num": 2}), encoding="utf-8")
    changed = (pack / ALT).read_bytes()
    page.act_reset.trigger()
    box = _box("confirmDialog")
    assert "holds the same recipe" not in box.text()
    assert (
        f"{ALT} holds a different recipe (thread_num: 1 in {USED}, 2 in {ALT}); it is left as it is"
        in box.text()
    )
    _click(box, "Reset")
    assert (pack / ALT).read_bytes() == changed  # as the message said


def test_differing_recipes_show_the_diff_and_ask_which_to_keep(
    windows: Callable[..., MainWindow], qtbot: QtBot
) -> None:
    window = windows(power="low")
    page, pack = window.recipes_page, _pack(window)
    twins = page.draft_twins
    assert f"{ALT} differs from it: power" in twins.rule.text()
    assert twins.choice.isVisible()
    diff = twins.diff_view.toPlainText()
    assert f"--- {USED}" in diff and '-  "power": "high",' in diff and '+  "power": "low",' in diff

    # Saving an edit writes the file DraftDeck runs, not the other: nothing is picked.
    alt_before = (pack / ALT).read_bytes()
    _spin(page.draft_editor, "thread_num").setValue(1)
    assert not twins.keep_other.isEnabled()  # unsaved edits first
    page.act_save.trigger()
    assert _read(pack / USED)["thread_num"] == 1
    assert (pack / ALT).read_bytes() == alt_before
    assert "thread_num: 1 in config_cpu.json, 2 in draft_config_cpu.json" in twins.rule.text()

    # Ctrl+Z with the diff focused still undoes the draft recipe.
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    twins.diff_view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is twins.diff_view)
    QTest.keyClick(twins.diff_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert page.draft_editor.data["thread_num"] == 2 and page.draft_editor.dirty
    page.act_redo.trigger()
    assert not page.draft_editor.dirty

    # The user keeps draft_config_cpu.json: it is copied over the one DraftDeck runs.
    twins.keep_other.click()
    box = _box("confirmDialog")
    assert f"Replace {pack / USED} with the recipe in {ALT}?" in box.text()
    _click(box, f"Keep {ALT}")
    assert _read(pack / USED) == _read(pack / ALT)
    assert page.draft_editor.data["power"] == "low" and not page.draft_editor.dirty
    assert "saving writes both in step" in twins.rule.text()
    assert not twins.choice.isVisible()
    assert page.act_undo.toolTip().startswith(f"Undo Keep {ALT}")


def test_a_failed_second_save_is_said_not_hidden(windows: Callable[..., MainWindow]) -> None:
    window = windows()
    page, pack = window.recipes_page, _pack(window)
    (pack / f"{ALT}.bak").mkdir()  # the twin's backup cannot be written: its save fails
    alt_before = (pack / ALT).read_bytes()
    _spin(page.draft_editor, "thread_num").setValue(1)
    page.act_save.trigger()
    box = _box("errorDialog")
    assert box.windowTitle() == "Draft recipes out of step"
    assert f"{USED} holds the new recipe; {ALT} still holds the one before" in box.text()
    box.close()
    assert _read(pack / USED)["thread_num"] == 1 and (pack / ALT).read_bytes() == alt_before
    assert not page.draft_editor.dirty  # config_cpu.json holds the edit
    assert page.draft_twins.choice.isVisible()  # the difference is on the page
    assert "thread_num: 1 in config_cpu.json, 2 in draft_config_cpu.json" in (
        page.draft_twins.rule.text()
    )
