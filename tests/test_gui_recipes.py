"""The Recipes page offscreen: form and JSON in sync, undo/redo, refusals, saving."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from PySide6.QtWidgets import QApplication, QComboBox, QMessageBox, QSpinBox
from pytestqt.qtbot import QtBot

from app.engine.worker.session import Session
from app.ui.application import create_main_window
from app.ui.main_window import MainWindow
from app.ui.recipe_editor import RecipeEditor
from app.ui.recipe_fields import ChoiceEditor, NumberEditor

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    win = create_main_window()
    root = win.library.root
    for name in ("qwen3-target", "qwen3-draft-noisy"):
        bundle_copy(name, root / name)
    win.show()
    win.show_page("pair")
    win.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    win.show_page("recipes")
    yield win
    win._closing_anyway = True  # unsaved test edits must not stop the teardown
    win.close()
    win.deleteLater()


def _spin(editor: RecipeEditor, key: str) -> QSpinBox:
    field = editor.editors[key]
    assert isinstance(field, NumberEditor) and isinstance(field.spin, QSpinBox)
    return field.spin


def _combo(editor: RecipeEditor, key: str) -> QComboBox:
    field = editor.editors[key]
    assert isinstance(field, ChoiceEditor)
    return field.combo


def _box(name: str) -> QMessageBox:
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()
    ]
    assert len(boxes) == 1, [b.text()[:60] for b in boxes]
    return boxes[0]


def _draft(window: MainWindow) -> RecipeEditor:
    return window.recipes_page.draft_editor


def _recipe(window: MainWindow) -> dict[str, object]:
    path = window.library.root / "qwen3-draft-noisy" / "config_cpu.json"
    return dict(json.loads(path.read_text()))


def test_loads_the_selected_pair(window: MainWindow) -> None:
    editor = _draft(window)
    assert editor.path == window.library.root / "qwen3-draft-noisy" / "config_cpu.json"
    assert _spin(editor, "thread_num").value() == 2
    assert _combo(editor, "power").currentText() == "high"
    target = window.recipes_page.target_editor
    assert _combo(target, "sampler_type").currentText() == "mixed"
    assert "llm_model" in target.others.text()  # unknown keys are shown
    assert not window.recipes_page.act_save.isEnabled()


def test_form_and_json_stay_in_sync(window: MainWindow) -> None:
    editor = _draft(window)
    _combo(editor, "memory").setCurrentText("normal")
    assert json.loads(editor.json_edit.toPlainText())["memory"] == "normal"
    text = editor.json_edit.toPlainText().replace('"thread_num": 2', '"thread_num": 5')
    editor.json_edit.setPlainText(text)
    editor.sync_from_json()
    assert _spin(editor, "thread_num").value() == 5
    # Removing a key in the JSON shows "not set" in the form.
    data = json.loads(editor.json_edit.toPlainText())
    del data["power"]
    editor.json_edit.setPlainText(json.dumps(data, indent=4))
    editor.sync_from_json()
    assert _combo(editor, "power").currentIndex() == 0
    assert window.recipes_page.tabs.tabText(0).endswith("•")


def test_json_view_updates_by_itself_after_typing(window: MainWindow, qtbot: QtBot) -> None:
    editor = _draft(window)
    editor.json_edit.setPlainText(editor.json_edit.toPlainText().replace('"low"', '"high"', 1))
    qtbot.waitUntil(lambda: _combo(editor, "precision").currentText() == "high", timeout=30_000)


def test_undo_and_redo(window: MainWindow) -> None:
    page = window.recipes_page
    editor = _draft(window)
    original = dict(editor.data)
    _spin(editor, "thread_num").setValue(3)
    _spin(editor, "thread_num").setValue(4)  # merges with the previous step
    _combo(editor, "memory").setCurrentText("normal")
    assert editor.undo_stack.count() == 2
    page.act_undo.trigger()
    assert editor.data["memory"] == "low" and editor.data["thread_num"] == 4
    page.act_undo.trigger()
    assert editor.data == original
    assert json.loads(editor.json_edit.toPlainText()) == original
    assert not editor.dirty
    page.act_redo.trigger()
    page.act_redo.trigger()
    assert editor.data["thread_num"] == 4 and editor.data["memory"] == "normal"
    assert _combo(editor, "memory").currentText() == "normal"


def test_save_writes_what_the_engine_reads(window: MainWindow, session: Session) -> None:
    editor = _draft(window)
    _spin(editor, "thread_num").setValue(1)
    _combo(editor, "memory").setCurrentText("normal")
    target = window.recipes_page.target_editor
    window.recipes_page.tabs.setCurrentIndex(1)
    _spin(target, "draft_predict_length").setValue(2)
    _combo(target, "memory").setCurrentText("normal")
    window.recipes_page.act_save.trigger()
    assert not window.recipes_page.has_unsaved()
    recipe = _recipe(window)
    assert recipe["thread_num"] == 1 and recipe["memory"] == "normal"
    assert list(recipe)[:3] == ["backend_type", "thread_num", "precision"]  # order kept
    root = window.library.root
    info = session.load(str(root / "qwen3-target"), str(root / "qwen3-draft-noisy"))
    assert info.draft_length == 2 and info.lossless_expected is True
    assert session.draft is not None and session.draft.config["thread_num"] == 1


def test_invalid_value_is_marked_and_saving_refused(window: MainWindow) -> None:
    editor = _draft(window)
    before = _recipe(window)
    editor.json_edit.setPlainText(editor.json_edit.toPlainText().replace('"low"', '"extreme"', 1))
    editor.sync_from_json()
    assert editor.editors["precision"].widget.property("invalid") is True
    assert "not one of" in editor.problem_label.text()
    window.recipes_page.act_save.trigger()
    box = _box("errorDialog")
    assert "precision" in box.text() and "not saved" in box.text()
    box.close()
    assert _recipe(window) == before


def test_broken_json_is_reported_and_not_saved(window: MainWindow) -> None:
    editor = _draft(window)
    before = _recipe(window)
    editor.json_edit.setPlainText('{\n    "thread_num": 2,\n}')
    editor.sync_from_json()
    assert "✕" in editor.json_status.text()
    window.recipes_page.save()
    box = _box("errorDialog")
    assert "line 3, column 1" in box.text()
    box.close()
    assert _recipe(window) == before


def test_change_on_disk_asks_before_overwriting(window: MainWindow) -> None:
    editor = _draft(window)
    _spin(editor, "thread_num").setValue(3)
    path = editor.path
    assert path is not None
    theirs = path.read_text().replace('"power": "high"', '"power": "low"')
    path.write_text(theirs)
    window.recipes_page.save()
    box = _box("confirmDialog")
    assert "changed by another program" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert path.read_text() == theirs
    window.recipes_page.save()
    box = _box("confirmDialog")
    next(b for b in box.buttons() if b.text() == "Overwrite").click()
    assert json.loads(path.read_text())["thread_num"] == 3


def test_preset_and_reset_to_pack_default(window: MainWindow) -> None:
    page = window.recipes_page
    names = [page.preset_combo.itemText(i) for i in range(page.preset_combo.count())]
    assert names[0] == "qwen3-draft-noisy's own recommendation"
    page.preset_combo.setCurrentIndex(names.index("Desktop CPU (lossless)"))
    page.act_preset.trigger()
    assert _draft(window).data["memory"] == "normal"
    assert page.target_editor.data["memory"] == "normal"
    assert "llm_model" in page.target_editor.data  # unknown keys untouched
    page.act_save.trigger()
    shipped = (
        window.library.root / "qwen3-draft-noisy" / ".draftdeck-original" / "config_cpu.json"
    ).read_text()
    page.tabs.setCurrentIndex(0)
    page.act_reset.trigger()
    next(b for b in _box("confirmDialog").buttons() if b.text() == "Reset").click()
    assert _draft(window).path is not None
    assert _draft(window).path.read_text() == shipped  # type: ignore[union-attr]
    assert _draft(window).data["memory"] == "low"


def test_quitting_with_unsaved_changes_asks(window: MainWindow) -> None:
    _spin(_draft(window), "thread_num").setValue(3)
    window.close()
    assert window.isVisible()
    box = _box("confirmDialog")
    next(b for b in box.buttons() if b.text() == "Discard and Quit").click()
    assert not window.isVisible()


def _cores(monkeypatch: pytest.MonkeyPatch, physical: int) -> None:
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: physical * (2 if logical else 1))


def _no_dialogs() -> None:
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]


def test_too_many_threads_warn_inline(window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    _cores(monkeypatch, 2)
    draft = _draft(window)
    _spin(draft, "thread_num").setValue(8)
    assert "⚠ thread_num: 8 threads on 2 physical cores" in draft.problem_label.text()
    assert draft.problem_label.isVisible()
    _no_dialogs()
    # Not set in the draft recipe: the pack's config.json (llmexport's 4) applies.
    _spin(draft, "thread_num").setValue(_spin(draft, "thread_num").minimum())
    assert "thread_num" not in draft.data
    assert (
        "thread_num: not set here, so the draft runs with the 4 threads of its config.json "
        "on 2 physical cores"
    ) in draft.problem_label.text()
    target = window.recipes_page.target_editor
    _spin(target, "thread_num").setValue(3)
    assert "thread_num: 3 threads on 2 physical cores" in target.problem_label.text()
    _no_dialogs()
    assert window.recipes_page.act_save.isEnabled()  # a warning, not a refusal

    _cores(monkeypatch, 8)
    _spin(draft, "thread_num").setValue(4)
    _spin(target, "thread_num").setValue(4)
    assert "physical cores" not in draft.problem_label.text() + target.problem_label.text()
