"""File → Make Pack…, offscreen, before anything is exported: the checks' refusal of a
block that does not divide the hidden size is shown with the block that fits, and Adjust
applies it; creating the export environment is asked first, with its folder and disk;
a folder carrying code of its own is asked about, naming it, and No runs nothing. An
HF folder's config.json and tokenizer_config.json are enough: nothing here needs torch
(tests/ui/packmaking/test_gui_make_pack_export.py exports and verifies a pack).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox
from pytestqt.qtbot import QtBot
from shiboken6 import isValid

from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.core.packmaking.export_checks import ExportSettings
from app.core.packmaking.export_env import EXPORT_ENV_VAR
from app.ui.packmaking.make_pack_dialog import MakePackDialog
from app.ui.shell.application import create_main_window
from tests.helpers.custom_code import evil_folder
from tests.helpers.smol_shape import smol_shaped_folder

WAIT_MS = 60_000  # a guard against a hang, not a speed limit


@pytest.fixture
def smol_folder(tmp_path: Path) -> Path:
    return smol_shaped_folder(tmp_path / "SmolLM2-135M")


def _dialog(qtbot: QtBot) -> MakePackDialog:
    dialog = MakePackDialog(Library(load_settings(), save_settings))
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_a_block_that_does_not_divide_the_hidden_size_is_refused(
    qtbot: QtBot, smol_folder: Path
) -> None:
    dialog = _dialog(qtbot)
    form = dialog.form
    QTest.keyClicks(form.source_edit, str(smol_folder))
    # The output folder is suggested beside the source, as Hub repos name MNN packs.
    assert form.out_edit.text() == str(smol_folder.with_name("SmolLM2-135M-MNN"))
    assert form.settings().block == 128
    qtbot.waitUntil(lambda: "quant_block 128" in form.check_label.text(), timeout=WAIT_MS)
    said = form.check_label.text()
    assert "does not divide the hidden size 576" in said and "config.json" in said
    assert form.check_label.objectName() == "warning"
    assert not dialog.start_button.isEnabled()
    QTest.keyClick(form.source_edit, Qt.Key.Key_Return)  # Return starts nothing refused
    assert not dialog.running()
    assert form.adjust_button.isVisible() and form.adjust_button.text() == "Use Block 64"
    form.adjust_button.click()
    assert form.settings().block == 64
    qtbot.waitUntil(lambda: form.check_label.text().startswith("Ready: "), timeout=WAIT_MS)
    assert "4-bit draft pack, block 64" in form.check_label.text()
    assert dialog.start_button.isEnabled()
    assert not smol_folder.with_name("SmolLM2-135M-MNN").exists()  # nothing ran
    QTest.keyClick(dialog, Qt.Key.Key_Escape)  # idle: Esc closes
    assert not dialog.isVisible()


def test_only_the_bits_the_exporter_writes_are_offered(qtbot: QtBot, smol_folder: Path) -> None:
    dialog = _dialog(qtbot)
    form = dialog.form
    box = form.bits_box
    assert [box.itemText(i) for i in range(box.count())] == ["2 bits", "4 bits", "8 bits"]
    assert form.settings().bits == 4
    form.source_edit.setText(str(smol_folder))
    form.set_settings(ExportSettings(block=64))
    box.setCurrentIndex(box.findText("8 bits"))
    assert form.settings().bits == 8
    ready = "8-bit draft pack, block 64"
    qtbot.waitUntil(lambda: ready in form.check_label.text(), timeout=WAIT_MS)
    assert form.check_label.text().startswith("Ready: ")


def test_a_folder_that_is_no_model_is_said_with_its_file(qtbot: QtBot, tmp_path: Path) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()
    dialog = _dialog(qtbot)
    dialog.form.source_edit.setText(str(empty))
    qtbot.waitUntil(lambda: "config.json" in dialog.form.check_label.text(), timeout=WAIT_MS)
    assert str(empty) in dialog.form.check_label.text()
    assert not dialog.start_button.isEnabled()
    dialog.form.source_edit.setText("not a folder nor/a/repo")
    assert "not an owner/name repo id" in dialog.form.check_label.text()


def test_the_file_menu_opens_both_dialogs(qtbot: QtBot) -> None:
    window = create_main_window()
    qtbot.addWidget(window)
    (file_menu,) = [m for m in window.menuBar().findChildren(QMenu) if m.title() == "&File"]
    titles = [a.text() for a in file_menu.actions()]
    assert "&Make Pack…" in titles and "&Publish to Hugging Face…" in titles
    make = window.pack_making.open_make_pack()
    assert make.isVisible() and window.pack_making.open_make_pack() is make  # one at a time
    publish = window.pack_making.open_publish()
    assert publish.isVisible()
    make.close()
    publish.close()
    qtbot.waitUntil(lambda: window.pack_making.make_dialog is None, timeout=WAIT_MS)


def _choice_box() -> QMessageBox:
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "choiceDialog" and w.isVisible()
    ]
    assert len(boxes) == 1, f"expected one question, found {len(boxes)}"
    return boxes[0]


def test_creating_the_export_environment_is_asked_first(
    qtbot: QtBot, smol_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_folder = tmp_path / "no-env-yet"
    monkeypatch.setenv(EXPORT_ENV_VAR, str(env_folder))
    dialog = _dialog(qtbot)
    dialog.form.source_edit.setText(str(smol_folder))
    dialog.form.set_settings(ExportSettings(block=64))
    qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
    QTest.keyClick(dialog.form.out_edit, Qt.Key.Key_Return)  # Return starts
    qtbot.waitUntil(lambda: dialog._step == "asking", timeout=WAIT_MS)
    box = _choice_box()
    assert str(env_folder) in box.text() and "free there" in box.text()
    assert "about 1.3 GB" in box.text() and "python_version" not in box.text()
    assert "torch" in box.text() and dialog.running()
    box.button(QMessageBox.StandardButton.Cancel).click()
    # Deleted before the dialog is: a box's deferred delete left pending under a dialog
    # Python frees at the test's end crashed the next turn of the event loop.
    qtbot.waitUntil(lambda: not isValid(box), timeout=WAIT_MS)
    assert not dialog.running()
    assert "Not started" in dialog.status.text()
    assert not env_folder.exists()  # nothing was built


def test_a_folder_with_code_of_its_own_is_asked_about_and_no_runs_nothing(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_folder = tmp_path / "no-env-yet"
    monkeypatch.setenv(EXPORT_ENV_VAR, str(env_folder))
    marker = tmp_path / "evil-ran"
    folder = evil_folder(tmp_path / "model", marker)
    dialog = _dialog(qtbot)
    dialog.form.source_edit.setText(str(folder))
    dialog.form.set_settings(ExportSettings(block=64))
    label = dialog.form.check_label
    qtbot.waitUntil(lambda: "carries code of its own" in label.text(), timeout=WAIT_MS)
    assert "evil.py" in label.text() and "Start asks" in label.text()
    assert dialog.start_button.isEnabled()  # Start asks; it runs nothing first
    dialog.start_button.click()
    qtbot.waitUntil(lambda: dialog._step == "asking", timeout=WAIT_MS)
    box = _choice_box()
    assert "Run the model folder's own code?" in box.windowTitle()
    assert "evil.py" in box.text() and "evil.EvilConfig" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)  # No
    QTest.keyClick(box, Qt.Key.Key_Return)  # Return takes the default: no
    qtbot.waitUntil(lambda: not isValid(box), timeout=WAIT_MS)
    assert not dialog.running()
    assert dialog.status.text() == "Not started: the folder's code was not trusted."
    assert not marker.exists() and not env_folder.exists()
    assert not folder.with_name("model-MNN").exists()
