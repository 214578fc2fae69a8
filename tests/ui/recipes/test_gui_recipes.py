"""The Recipes page offscreen: form and JSON in sync, undo/redo, refusals, saving."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QMessageBox, QSpinBox, QWidget
from pytestqt.qtbot import QtBot

from app.core.recipe.schema import FIELDS
from app.engine.worker.session import Session
from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_fields import ChoiceEditor, NumberEditor, make_editor
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

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


def test_undoing_back_to_the_saved_recipe_is_no_unsaved_change(window: MainWindow) -> None:
    page = window.recipes_page
    editor = _draft(window)
    threads = _spin(editor, "thread_num")
    saved = 1 if threads.value() != 1 else 2
    threads.setValue(saved)
    page.act_save.trigger()
    page.act_undo.trigger()  # the file still holds `saved`: an unsaved change
    assert editor.dirty and "Unsaved changes" in page.save_note.text()
    threads.setValue(saved)  # the saved value again, by hand: the undo stack's mark is gone
    _combo(editor, "memory").setCurrentText("normal")
    page.act_undo.trigger()  # back to what the file holds
    assert editor.data == _recipe(window)
    assert not editor.dirty
    assert "Unsaved changes" not in page.save_note.text()
    assert not page.act_save.isEnabled() and not window.isWindowModified()


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
    assert names[0] == "The pack's recommendation"
    page.preset_combo.setCurrentIndex(names.index("Desktop CPU (lossless)"))
    memory = _draft(window).data.get("memory")
    page.act_preset.trigger()
    # A preset for this computer: its desktop keys go to "On this computer", not into
    # the phone's recipes (which keep their memory mode).
    assert page.draft_desktop.keys()["memory"] == "normal"
    assert page.target_desktop.keys()["memory"] == "normal"
    assert _draft(window).data.get("memory") == memory
    assert "llm_model" in page.target_editor.data  # unknown keys untouched
    _combo(page.draft_editor, "power").setCurrentText("low")  # an edit of the recipe
    page.act_save.trigger()
    shipped = (
        window.library.root / "qwen3-draft-noisy" / ".draftdeck-original" / "config_cpu.json"
    ).read_text()
    page.tabs.setCurrentIndex(0)
    page.act_reset.trigger()
    next(b for b in _box("confirmDialog").buttons() if b.text() == "Reset").click()
    assert _draft(window).path is not None
    assert _draft(window).path.read_text() == shipped  # type: ignore[union-attr]
    assert _draft(window).data["power"] == "high"


def test_reset_says_which_file_it_resets(window: MainWindow) -> None:
    page = window.recipes_page
    for editor in page.editors:  # both files edited and saved, so both can be reset
        _combo(editor, "power").setCurrentText("low")
    page.act_save.trigger()
    target_saved = (window.library.root / "qwen3-target" / "config.json").read_text()
    page.tabs.setCurrentIndex(1)
    assert page.act_reset.text() == "Reset Target to Pack Default"
    page.tabs.setCurrentIndex(0)
    assert page.act_reset.text() == "Reset Draft to Pack Default"
    assert "other tab" in page.act_reset.toolTip()
    page.act_reset.trigger()
    next(b for b in _box("confirmDialog").buttons() if b.text() == "Reset").click()
    assert _recipe(window)["power"] == "high"  # the draft recipe as shipped
    # As the pack shipped it: nothing to reset (it offered a reset and a .bak of the same).
    assert not page.act_reset.isEnabled()
    assert page.act_reset.toolTip() == "config_cpu.json is already as the pack shipped it"
    _combo(page.draft_editor, "power").setCurrentText("low")  # unsaved edits: Reset again
    assert page.act_reset.isEnabled()
    # The target's file, on the tab not shown, keeps its saved edit.
    assert (window.library.root / "qwen3-target" / "config.json").read_text() == target_saved


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
        "thread_num: not set here, so the draft takes the 4 threads of its config.json, "
        "which DraftDeck holds to this computer's 2 physical cores: it runs with 2 here"
    ) in draft.problem_label.text()
    target = window.recipes_page.target_editor
    _spin(target, "thread_num").setValue(3)
    # config.json's count is held to the cores (as Tune says): it runs as 2, not slower.
    assert (
        "thread_num: 3 threads on 2 physical cores: DraftDeck runs it with 2 here"
        in target.problem_label.text()
    )
    _no_dialogs()
    assert window.recipes_page.act_save.isEnabled()  # a warning, not a refusal

    _cores(monkeypatch, 8)
    _spin(draft, "thread_num").setValue(4)
    _spin(target, "thread_num").setValue(4)
    assert "physical cores" not in draft.problem_label.text() + target.problem_label.text()


# -- one undo stack, whatever has focus (#20) -----------------------------------------------


def _focus(qtbot: QtBot, window: MainWindow, widget: QWidget) -> QWidget:
    """Give `widget` the keyboard focus in the active window; returns the focused widget
    (a spin box's is its line edit), which is where key presses go."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    widget.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    focused = QApplication.focusWidget()
    assert focused is widget or focused in widget.findChildren(QWidget)
    return focused


def _press(widget: QWidget, keys: str) -> None:
    """A Ctrl chord such as "Ctrl+Z" or "Ctrl+Shift+Z", pressed in `widget`."""
    *mods, key = keys.split("+")
    modifiers = Qt.KeyboardModifier.ControlModifier
    if "Shift" in mods:
        modifiers |= Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(widget, getattr(Qt.Key, f"Key_{key}"), modifiers)


def _json_cursor_after(editor: RecipeEditor, text: str) -> None:
    cursor = editor.json_edit.textCursor()
    cursor.setPosition(editor.json_edit.toPlainText().index(text) + len(text))
    editor.json_edit.setTextCursor(cursor)


def _parses(editor: RecipeEditor) -> dict[str, object]:
    return dict(json.loads(editor.json_edit.toPlainText()))


def test_ctrl_z_in_the_json_pane_undoes_the_document(window: MainWindow, qtbot: QtBot) -> None:
    editor = _draft(window)
    shipped_text = editor.json_edit.toPlainText()
    pane = _focus(qtbot, window, editor.json_edit)
    _json_cursor_after(editor, '"thread_num": 2')
    QTest.keyClick(pane, Qt.Key.Key_Backspace)
    QTest.keyClicks(pane, "5")
    assert window.recipes_page.act_undo.isEnabled()  # before the JSON is even parsed
    _press(pane, "Ctrl+Z")
    assert editor.json_edit.toPlainText() == shipped_text
    assert editor.data["thread_num"] == 2 and not editor.dirty
    # A form edit, then JSON that does not parse: the first Ctrl+Z drops the bad text
    # (what was typed last), the next undoes the form edit. Never an invalid state.
    _spin(editor, "thread_num").setValue(3)
    _json_cursor_after(editor, '"thread_num": 3')
    QTest.keyClicks(pane, ",,")
    editor.sync_from_json()
    assert "✕" in editor.json_status.text()
    assert not editor.fields_box.isEnabled()  # the form cannot overwrite the typed text
    _press(pane, "Ctrl+Z")
    assert _parses(editor)["thread_num"] == 3 and editor.fields_box.isEnabled()
    _press(pane, "Ctrl+Z")
    assert _parses(editor)["thread_num"] == 2 and not editor.dirty
    page = window.recipes_page
    page.act_redo.trigger()
    assert _parses(editor)["thread_num"] == 3 and "✓" in editor.json_status.text()
    page.act_redo.trigger()  # nothing further: the unparsed text is not on the stack
    assert _parses(editor)["thread_num"] == 3


def test_ctrl_z_in_a_spin_box_undoes_the_document(window: MainWindow, qtbot: QtBot) -> None:
    editor = _draft(window)
    _combo(editor, "memory").setCurrentText("normal")  # an earlier change, elsewhere
    spin = _focus(qtbot, window, _spin(editor, "thread_num"))
    _press(spin, "Ctrl+A")
    QTest.keyClicks(spin, "7")
    assert editor.data["thread_num"] == 7 and _parses(editor)["thread_num"] == 7
    _press(spin, "Ctrl+Z")
    assert editor.data["thread_num"] == 2 and _spin(editor, "thread_num").value() == 2
    _press(spin, "Ctrl+Z")  # the same stack: the combo's change goes next
    assert editor.data["memory"] == "low" and not editor.dirty
    _press(spin, "Ctrl+Shift+Z")
    _press(spin, "Ctrl+Y")
    assert editor.data["memory"] == "normal" and editor.data["thread_num"] == 7
    assert _spin(editor, "thread_num").value() == 7


def test_ctrl_z_in_a_line_edit_undoes_the_document(window: MainWindow, qtbot: QtBot) -> None:
    page = window.recipes_page
    page.tabs.setCurrentIndex(1)
    target = page.target_editor
    line = target.editors["draft_config_path"].widget
    assert isinstance(line, QLineEdit)
    before = dict(target.data)
    focused = _focus(qtbot, window, line)
    _press(focused, "Ctrl+A")
    QTest.keyClicks(focused, "drafts/config_cpu.json")
    assert target.data["draft_config_path"] == "drafts/config_cpu.json"
    _press(focused, "Ctrl+Z")
    assert target.data == before and line.text() == before.get("draft_config_path", "")
    assert not target.dirty
    _press(focused, "Ctrl+Z")  # nothing left: the line edit's own undo must not act either
    assert target.data == before and line.text() == before.get("draft_config_path", "")
    _press(focused, "Ctrl+Y")
    assert line.text() == "drafts/config_cpu.json"


def test_revert_is_undone_like_any_change(window: MainWindow, qtbot: QtBot) -> None:
    page = window.recipes_page
    editor = _draft(window)
    _spin(editor, "thread_num").setValue(3)
    page.act_revert.trigger()
    next(b for b in _box("confirmDialog").buttons() if b.text() == "Revert").click()
    assert editor.data["thread_num"] == 2 and not editor.dirty
    _press(_focus(qtbot, window, editor.json_edit), "Ctrl+Z")
    assert editor.data["thread_num"] == 3 and editor.dirty


def _set_json(editor: RecipeEditor, key: str, value: object) -> None:
    data = _parses(editor)
    data[key] = value
    editor.json_edit.setPlainText(json.dumps(data, indent=4))
    editor.sync_from_json()


def test_an_invalid_value_is_shown_as_invalid(window: MainWindow) -> None:
    target = window.recipes_page.target_editor
    length = _spin(target, "draft_predict_length")
    for value, shown, problem in (
        (0, "0", "must be at least 1"),
        (40, "40 (not valid)", "must be at most 16"),
        ("three", '"three" (not valid)', "must be a whole number"),
    ):
        _set_json(target, "draft_predict_length", value)
        assert length.text() == shown
        assert length.property("invalid") is True
        assert problem in length.toolTip()
        assert target.data["draft_predict_length"] == value  # shown, not changed
    _set_json(target, "precision", "extreme")
    precision = _combo(target, "precision")
    assert precision.currentText() == '"extreme" (not valid)'
    assert precision.property("invalid") is True and "not one of" in precision.toolTip()
    # Picking a real value replaces it, and the mark goes.
    length.setValue(2)
    precision.setCurrentText("high")
    assert target.data["draft_predict_length"] == 2 and target.data["precision"] == "high"
    assert length.property("invalid") is False and precision.property("invalid") is False
    assert precision.findText('"extreme" (not valid)') == -1


def test_a_typed_zero_stays_zero(window: MainWindow, qtbot: QtBot) -> None:
    target = window.recipes_page.target_editor
    window.recipes_page.tabs.setCurrentIndex(1)
    spin = _spin(target, "draft_predict_length")
    focused = _focus(qtbot, window, spin)
    _press(focused, "Ctrl+A")
    QTest.keyClicks(focused, "0")
    assert target.data["draft_predict_length"] == 0 and spin.text() == "0"
    assert spin.property("invalid") is True  # 0 is below this field's minimum of 1
    # The arrows skip such numbers: down to "not set", up to the least allowed value.
    QTest.keyClick(focused, Qt.Key.Key_Down)
    assert "draft_predict_length" not in target.data and spin.text() == "(not set: 3)"
    QTest.keyClick(focused, Qt.Key.Key_Up)
    assert target.data["draft_predict_length"] == 1 and spin.property("invalid") is False
    # Where 0 is allowed it is an ordinary value, not "not set".
    for key in ("top_k", "temperature"):
        field = make_editor(FIELDS[key])
        assert isinstance(field, NumberEditor)
        qtbot.addWidget(field.spin)
        field.spin.lineEdit().selectAll()
        QTest.keyClicks(field.spin, "0")
        assert field.value() == 0 and field.spin.text().rstrip("0.") == ""
        assert field.spin.value() > field.spin.minimum()


def test_save_says_so(window: MainWindow, qtbot: QtBot) -> None:
    page = window.recipes_page
    editor = _draft(window)
    assert page.save_note.text() == ""
    spin = _focus(qtbot, window, _spin(editor, "thread_num"))
    _press(spin, "Ctrl+A")
    QTest.keyClicks(spin, "3")
    assert "Unsaved changes in the draft recipe" in page.save_note.text()
    assert page.act_save.isEnabled() and page.tabs.tabText(0).endswith("•")
    _press(spin, "Ctrl+S")
    assert page.save_note.text().startswith("✓ Saved qwen3-draft-noisy/config_cpu.json at ")
    assert not page.act_save.isEnabled() and not page.tabs.tabText(0).endswith("•")
    assert _recipe(window)["thread_num"] == 3
    QTest.keyClicks(spin, "4")  # the next edit: unsaved again
    assert "Unsaved changes" in page.save_note.text()


def test_the_window_title_marks_unsaved_recipes(window: MainWindow, qtbot: QtBot) -> None:
    """Unsaved edits show in the title bar (the platform's mark), whatever page is open."""
    assert not window.isWindowModified()
    spin = _focus(qtbot, window, _spin(_draft(window), "thread_num"))
    _press(spin, "Ctrl+A")
    QTest.keyClicks(spin, "3")
    assert window.isWindowModified()
    window.show_page("chat")
    assert window.isWindowModified()
    window.show_page("recipes")
    _press(spin, "Ctrl+Z")  # undone to the saved value: nothing unsaved
    assert not window.isWindowModified()
    QTest.keyClicks(spin, "5")
    _press(spin, "Ctrl+S")
    assert not window.isWindowModified()
