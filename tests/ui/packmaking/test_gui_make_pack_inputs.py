"""File → Make Pack…, offscreen, its inputs and what it says of a run: the output folder
follows the model until the user types there, and typing then replaces the suggestion
instead of adding to it; a tokenizer.model that is a GGUF file is named by the checks;
an export shows stage k of n on a determinate bar with the exporter's symbols in words,
a failed one says why in words, not a traceback, and that goes once the Model field
changes. The exporter is a stand-in printing a real export's recorded lines
(tests/helpers/script_exporter.py): no torch needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.core.packmaking.export_checks import ExportSettings
from app.core.packmaking.export_env import EXPORT_ENV_VAR
from app.ui.packmaking.job_dialog import BAR_STEPS
from app.ui.packmaking.make_pack_dialog import MakePackDialog
from tests.core.test_export_progress import RECORDED, TRACEBACK
from tests.helpers.export_env import HF_FIXTURES
from tests.helpers.script_exporter import ready_script_env
from tests.helpers.smol_shape import smol_shaped_folder

WAIT_MS = 60_000  # a guard against a hang, not a speed limit


def _dialog(qtbot: QtBot) -> MakePackDialog:
    dialog = MakePackDialog(Library(load_settings(), save_settings))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT_MS)  # clicks then give focus
    return dialog


def test_typing_in_the_suggested_output_folder_replaces_it(qtbot: QtBot, tmp_path: Path) -> None:
    first = smol_shaped_folder(tmp_path / "SmolLM2-135M")
    second = smol_shaped_folder(tmp_path / "Other")
    dialog = _dialog(qtbot)
    form = dialog.form
    QTest.keyClicks(form.source_edit, str(first))
    suggested = str(first.with_name("SmolLM2-135M-MNN"))
    assert form.out_edit.text() == suggested
    QTest.mouseClick(form.out_edit, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: form.out_edit.selectedText() == suggested, timeout=WAIT_MS)
    mine = str(tmp_path / "mine")
    QTest.keyClicks(form.out_edit, mine)
    assert form.out_edit.text() == mine  # not the suggestion with the typing after it
    QTest.keyClicks(form.out_edit, "-q4")  # the user's own text edits as any text does
    assert form.out_folder() == tmp_path / "mine-q4"
    form.source_edit.setText(str(second))
    assert form.out_edit.text() == mine + "-q4"  # the user's choice stays
    form.out_edit.selectAll()
    QTest.keyClick(form.out_edit, Qt.Key.Key_Backspace)
    form.source_edit.setText(str(first))  # an emptied field takes the suggestion again
    assert form.out_edit.text() == suggested


def test_a_gguf_file_named_tokenizer_model_is_named_by_the_checks(
    qtbot: QtBot, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(HF_FIXTURES / "llama-tiny", tmp_path / "llama"))
    (folder / "tokenizer.model").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 64)
    dialog = _dialog(qtbot)
    dialog.form.source_edit.setText(str(folder))
    dialog.form.set_settings(ExportSettings(block=64))
    label = dialog.form.check_label
    qtbot.waitUntil(lambda: "GGUF" in label.text(), timeout=WAIT_MS)
    assert f"{folder / 'tokenizer.model'}: is a GGUF file" in label.text()
    assert label.objectName() == "warning" and not dialog.start_button.isEnabled()


def _exporter(gate: Path) -> str:
    """Prints the recorded lines up to the quantization's end, waits for `gate` (the
    test's look at the dialog mid-export), then fails with the recorded traceback."""
    lines = [line for line, _, _ in RECORDED[:10]]
    return (
        "import os, sys, time\n"
        f"for line in {lines!r}: print(line, flush=True)\n"
        "deadline = time.monotonic() + 300\n"
        f"while not os.path.exists({str(gate)!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        f"sys.stderr.write({chr(10).join(TRACEBACK) + chr(10)!r})\n"
        "sys.exit(1)\n"
    )


def test_an_export_shows_its_stages_and_a_failure_in_words_that_go_with_the_inputs(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "go-on"
    env = ready_script_env(tmp_path / "env", _exporter(gate))
    monkeypatch.setenv(EXPORT_ENV_VAR, str(env.folder))
    dialog = _dialog(qtbot)
    form = dialog.form
    form.source_edit.setText(str(HF_FIXTURES / "llama-tiny"))
    form.out_edit.setText(str(tmp_path / "llama-MNN"))
    form.set_settings(ExportSettings(block=64))
    qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
    dialog.start_button.click()
    status = dialog.status
    qtbot.waitUntil(lambda: "llm.mnn.weight" in status.text(), timeout=WAIT_MS)
    assert status.text() == (
        "Exporting, stage 4 of 7, quantizing the weights: "
        "OK Done quant model weight to ./llm.mnn.weight"
    )
    assert dialog.bar.value() == BAR_STEPS * 4 // 7  # 4 stages of 7 done
    gate.touch()
    qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
    assert status.text() == (
        "the exporter failed while quantizing the weights (exit code 1): "
        "AttributeError: 'bool' object has no attribute 'eos_token_id'"
    )
    assert status.objectName() == "warning" and not (tmp_path / "llama-MNN").exists()
    QTest.keyClicks(form.source_edit, "x")  # another model: the old one's error goes
    assert status.text() == ""
