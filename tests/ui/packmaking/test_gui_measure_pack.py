"""File → Measure Pack…, offscreen, with the real engine on the committed fixture packs:
the dialog lists the Library's targets (a blocked one disabled, with why), measures the
ticked ones in the background and writes a runtime_config.json that DraftDeck's own
advice code reads back as TokForge's; Esc stops a measuring and writes nothing; a
runtime_config.json DraftDeck did not write is replaced only once the user says so.

Short runs (48 tokens, runs of 0.05 s; Quick tune with no budget), as the command line's
test measures: whether the fast pair pays depends on the machine, so the tests hold the
file to what was measured, not to a speed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from app.core.infra.settings import load_settings, save_settings
from app.core.pack.advice import read_advice, recommendation
from app.core.pack.bundle import read_bundle
from app.core.pack.known_models import identify
from app.core.pack.library import Library
from app.core.packmaking.measured import (
    QUICK_TUNE,
    percent,
    written_by_draftdeck,
)
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.engine.client.pack_measure import MeasureOptions
from app.engine.client.pack_measure_job import MeasureState
from app.ui.packmaking.measure_choices import NAME, PAIRING, PROGRESS
from app.ui.packmaking.measure_pack_dialog import MeasurePackDialog
from tests.helpers.tune_results import fast_target_measurement
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
SHORT = MeasureOptions(tokens=48, min_run_seconds=0.05)
QUICK = MeasureOptions(tokens=16, min_run_seconds=0.0, budget_seconds=0.0)
# A bench that would take many minutes: only a working cancel ends it within WAIT_MS.
ENDLESS = MeasureOptions(tokens=48, runs=2000, min_run_seconds=0.05)
WAIT_MS = 240_000  # real engine runs on a loaded 2-core machine: a hang guard only


@pytest.fixture
def library(bundle_copy: Copy, tmp_path: Path) -> Library:
    """fast-draft with fast-target, and a Qwen3.5 pack without a draft recipe (so it may
    be a target): blocked with this draft (another vocabulary)."""
    library = Library(load_settings(), save_settings)
    packs = tmp_path / "packs"
    for name in ("fast-draft", "fast-target"):
        library.add_folder(bundle_copy(name, packs / name, desktop=True))
    other = bundle_copy("qwen35-draft", packs / "qwen35-other")
    (other / "config_cpu.json").unlink()
    library.add_folder(other)
    return library


def _draft(library: Library) -> Path:
    return next(p for p, _ in library.pack_folders() if p.name == "fast-draft")


def _dialog(qtbot: QtBot, library: Library, options: MeasureOptions = SHORT) -> MeasurePackDialog:
    dialog = MeasurePackDialog(library, _draft(library), options)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
    return dialog


def _items(dialog: MeasurePackDialog) -> dict[str, QTreeWidgetItem]:
    return {item.text(NAME): item for item in dialog.choices.items()}


def _finish(qtbot: QtBot, dialog: MeasurePackDialog) -> str:
    qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
    return dialog.status.text()


def test_the_librarys_targets_are_listed_and_a_blocked_one_is_disabled_with_why(
    qtbot: QtBot, library: Library
) -> None:
    dialog = _dialog(qtbot, library)
    assert dialog.choices.draft_box.currentText() == "fast-draft"
    box = dialog.choices.draft_box
    # Every pack that may be a draft: the tiny ones may be either.
    assert [box.itemText(i) for i in range(box.count())] == [
        "fast-draft",
        "fast-target",
        "qwen35-other",
    ]
    items = _items(dialog)
    assert set(items) == {"fast-target", "qwen35-other"}  # never the draft itself
    fast = items["fast-target"]
    assert fast.checkState(NAME) == Qt.CheckState.Checked and fast.text(PAIRING) == "Compatible"
    blocked = items["qwen35-other"]
    assert not blocked.flags() & Qt.ItemFlag.ItemIsEnabled
    assert blocked.checkState(NAME) == Qt.CheckState.Unchecked
    assert blocked.text(PAIRING).startswith("This pair cannot work: ")
    assert "different vocabularies" in blocked.text(PAIRING)
    # Its whole reason is shown, not only a tooltip or an elided cell.
    assert dialog.choices.refused.isVisible()
    assert f"qwen35-other: {blocked.text(PAIRING)}" in dialog.choices.refused.text()
    assert dialog.choices.ticked_paths() == [_draft(library).parent / "fast-target"]
    fast.setCheckState(NAME, Qt.CheckState.Unchecked)
    assert not dialog.start_button.isEnabled()  # nothing ticked: nothing to measure


def test_a_bench_writes_a_runtime_config_the_advice_code_reads_back(
    qtbot: QtBot, library: Library
) -> None:
    dialog = _dialog(qtbot, library)
    draft = _draft(library)
    recipe_before = (draft / "config_cpu.json").read_bytes()
    QTest.keyClick(dialog.choices.draft_box, Qt.Key.Key_Return)  # Return starts
    assert dialog.running() and dialog.close_button.text() == "Cancel"
    said = _finish(qtbot, dialog)
    assert said.startswith(f"Wrote runtime_config.json, README.md into {draft}."), said
    assert _items(dialog)["fast-target"].text(PROGRESS) == "measured"
    written = json.loads((draft / "runtime_config.json").read_text())
    assert written_by_draftdeck(written)
    assert set(written["compatible_targets"]) == {"fast_target"}  # only what was ticked
    entry = written["compatible_targets"]["fast_target"]
    figures = entry["measured"]
    pays = figures["uplift_low"] > 1.0
    assert entry["enabled"] is pays and figures["method"] == "bench"
    # Read back as the Pair page and `draftdeck check` read TokForge's file.
    target_info, draft_info = read_bundle(draft.parent / "fast-target"), read_bundle(draft)
    rec = recommendation(
        read_advice(draft_info.runtime_config), identify(target_info), target_info.name
    )
    assert rec is not None and rec.target_key == "fast_target" and rec.enabled is pays
    assert rec.uplift is not None and rec.uplift.startswith(percent(figures["uplift"]))
    # The table shows what the file says, and the host the figures came from.
    table = dialog.results.toPlainText()
    assert "fast-target" in table and percent(figures["uplift"]) in table
    assert f"{percent(figures['uplift_low'])} to {percent(figures['uplift_high'])}" in table
    assert written["notes"]["measured_on"] in table.replace("\n", " ")
    assert (draft / "config_cpu.json").read_bytes() == recipe_before  # it says what ran
    # The next step: Publish… on this pack.
    assert dialog.publish_button.isVisible()
    with qtbot.waitSignal(dialog.publish_requested) as heard:
        dialog.publish_button.click()
    assert heard.args == [draft]


def test_esc_stops_the_measuring_and_writes_nothing(qtbot: QtBot, library: Library) -> None:
    dialog = _dialog(qtbot, library, ENDLESS)
    draft = _draft(library)
    dialog.start_button.click()
    job = dialog._job
    assert job is not None
    progress = _items(dialog)["fast-target"]
    # Mid-bench, as the dialog shows it: "3/2000 run pairs".
    qtbot.waitUntil(lambda: progress.text(PROGRESS).endswith("/2000 run pairs"), timeout=WAIT_MS)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)  # a running measuring: Esc cancels it
    assert _finish(qtbot, dialog) == "Cancelled: nothing was written."
    assert job.status().state == MeasureState.CANCELLED
    assert dialog.isVisible()
    assert not (draft / "runtime_config.json").exists() and not (draft / "README.md").exists()
    assert not dialog.publish_button.isVisible()
    QTest.keyClick(dialog, Qt.Key.Key_Escape)  # idle: Esc closes
    assert not dialog.isVisible()


def _question() -> QMessageBox:
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "confirmDialog" and w.isVisible()
    ]
    assert len(boxes) == 1, f"expected one question, found {len(boxes)}"
    return boxes[0]


def _press(box: QMessageBox, text: str) -> None:
    button = next(b for b in box.buttons() if b.text() == text)
    button.click()


def test_a_runtime_config_draftdeck_did_not_write_is_replaced_only_when_asked(
    qtbot: QtBot, library: Library, fixture_bundle: Callable[[str], Path]
) -> None:
    draft = _draft(library)
    theirs = (fixture_bundle("qwen3-draft-noisy") / "runtime_config.json").read_bytes()
    (draft / "runtime_config.json").write_bytes(theirs)  # as TokForge or a person wrote it
    # Their draft recipe leaves the sampler to config.json (measuring would name it) and
    # memory too (config.json's "low" runs: this computer's settings keep that).
    recipe = json.loads((draft / "config_cpu.json").read_text())
    del recipe["sampler_type"], recipe["memory"]
    (draft / "config_cpu.json").write_text(json.dumps(recipe, indent=2))
    their_recipe = (draft / "config_cpu.json").read_bytes()
    dialog = _dialog(qtbot, library, QUICK)
    dialog.choices.quick.setChecked(True)
    dialog.start_button.click()
    box = _question()
    assert box.text().startswith("fast-draft has a runtime_config.json DraftDeck did not")
    assert "kept beside as runtime_config.json.bak" in box.text()
    assert "config_cpu.json" not in box.text()  # the question is not about the recipe
    _press(box, "Cancel")
    assert not dialog.running()
    assert (draft / "runtime_config.json").read_bytes() == theirs
    assert not (draft / "runtime_config.json.bak").exists() and not (draft / "README.md").exists()

    dialog.start_button.click()
    _press(_question(), "Replace and Measure")
    assert dialog.running()
    said = _finish(qtbot, dialog)
    assert said.startswith("Wrote runtime_config.json"), said
    assert "kept as runtime_config.json.bak" in said
    # The answer was about runtime_config.json: their recipe is kept, and said so.
    assert (draft / "config_cpu.json").read_bytes() == their_recipe
    assert "config_cpu.json is kept as it is (DraftDeck did not write it)" in said
    # What was measured here went to this computer's settings, and the words say so.
    assert read_desktop(draft).of("config_cpu.json") == {"memory": "low"}
    assert (
        f"In {THIS_COMPUTER_FILE} (this computer's settings for the pack: measured here; "
        "DraftDeck runs the pack with them, a phone never gets them): memory low." in said
    ), said
    assert (draft / "runtime_config.json.bak").read_bytes() == theirs
    written = json.loads((draft / "runtime_config.json").read_text())
    assert written_by_draftdeck(written)
    assert written["compatible_targets"]["fast_target"]["measured"]["method"] == QUICK_TUNE
    # The file is DraftDeck's now: measuring again asks nothing (and, cancelled, keeps it).
    dialog.start_button.click()
    assert dialog.running()
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    assert _finish(qtbot, dialog) == "Cancelled: nothing was written."
    assert json.loads((draft / "runtime_config.json").read_text()) == written


def test_the_file_menu_opens_it_on_the_selected_draft(qtbot: QtBot, bundle_copy: Copy) -> None:
    with open_window(qtbot) as window:
        add_packs(window, bundle_copy, ("fast-draft", "fast-target"), desktop=True)
        (file_menu,) = [m for m in window.menuBar().findChildren(QMenu) if m.title() == "&File"]
        (action,) = [a for a in file_menu.actions() if a.text() == "Mea&sure Pack…"]
        window.library_page.select_path(window.library.root / "fast-target")
        action.trigger()
        dialog = window.pack_making.measure_dialog
        assert dialog is not None and dialog.isVisible()
        box = dialog.choices.draft_box
        qtbot.waitUntil(lambda: box.currentText() == "fast-target", timeout=WAIT_MS)
        # One dialog at a time: asked again for another draft, it chooses that one.
        assert window.pack_making.open_measure(window.library.root / "fast-draft") is dialog
        qtbot.waitUntil(lambda: box.currentText() == "fast-draft", timeout=WAIT_MS)
        qtbot.waitUntil(lambda: "fast-target" in _items(dialog), timeout=WAIT_MS)
        dialog.close()
        qtbot.waitUntil(lambda: window.pack_making.measure_dialog is None, timeout=WAIT_MS)


def test_it_does_not_start_while_something_else_measures(qtbot: QtBot, library: Library) -> None:
    dialog = MeasurePackDialog(
        library, _draft(library), SHORT, measuring_elsewhere=lambda: "a Tune sweep is measuring"
    )
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
    dialog.start_button.click()
    assert not dialog.running()
    assert dialog.status.text().startswith("Not started: a Tune sweep is measuring.")
    assert not (_draft(library) / "runtime_config.json").exists()


def test_the_window_lets_one_measurement_run_at_a_time(qtbot: QtBot, bundle_copy: Copy) -> None:
    """Measure Pack and a Tune sweep each refuse to start while the other measures."""
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, ("fast-draft", "fast-target"), desktop=True)
        window.pair_page.choose(root / "fast-target", root / "fast-draft")
        dialog = window.pack_making.open_measure(root / "fast-draft")
        qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
        dialog.start()
        assert dialog.running()
        tune = window.tune_page
        tune.start()
        assert tune.job is None
        assert tune.verdict.text().startswith(
            "Not started: a pack is being measured (Measure Pack)."
        )
        dialog.cancel()
        qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
        tune.start()  # Measure Pack has stopped: the sweep starts
        assert tune.job is not None
        dialog.start()
        assert not dialog.running()
        assert dialog.status.text().startswith("Not started: a Tune sweep is measuring.")
        tune.cancel()
        qtbot.waitUntil(lambda: not window.tune_sweeps.running(), timeout=WAIT_MS)
        dialog.close()


def _asking() -> bool:
    return any(
        isinstance(w, QMessageBox) and w.objectName() == "confirmDialog" and w.isVisible()
        for w in QApplication.topLevelWidgets()
    )


def test_a_file_that_appears_while_measuring_is_asked_about_and_the_figures_kept(
    qtbot: QtBot, library: Library
) -> None:
    dialog = _dialog(qtbot, library)
    draft = _draft(library)
    # Written by someone else after the dialog looked at the pack (its measuring done).
    (draft / "runtime_config.json").write_text('{"recommended": {}}\n')
    dialog._write(draft, [fast_target_measurement(draft)])
    qtbot.waitUntil(_asking, timeout=WAIT_MS)
    box = _question()
    assert "runtime_config.json appeared in fast-draft while it was measured" in box.text()
    said = dialog.status.text()
    assert said == "Measured, but not written yet: runtime_config.json is not DraftDeck's."
    _press(box, "Replace")
    said = _finish(qtbot, dialog)
    assert said.startswith("Wrote runtime_config.json"), said
    assert written_by_draftdeck(json.loads((draft / "runtime_config.json").read_text()))
    assert (draft / "runtime_config.json.bak").read_text() == '{"recommended": {}}\n'


def test_refusals_are_said_once_a_reason_and_leave_the_results_their_height(
    qtbot: QtBot, bundle_copy: Copy, tmp_path: Path
) -> None:
    """Eight packs refused for one reason, at 1280x800: a line per pack repeated the
    reason eight times and squeezed the results to three rows; one line now names them
    all, and the results keep room for a dozen rows of the measured table."""
    library = Library(load_settings(), save_settings)
    packs = tmp_path / "packs"
    for name in ("fast-draft", "fast-target"):
        library.add_folder(bundle_copy(name, packs / name, desktop=True))
    refused = [f"qwen35-{i}" for i in range(8)]
    for name in refused:
        other = bundle_copy("qwen35-draft", packs / name)
        (other / "config_cpu.json").unlink()
        library.add_folder(other)
    dialog = _dialog(qtbot, library)
    dialog.resize(1280, 800)
    qtbot.waitUntil(lambda: dialog.size().height() == 800, timeout=WAIT_MS)
    reason = _items(dialog)["qwen35-0"].text(PAIRING)
    lines = dialog.choices.refused.text().splitlines()
    assert lines == ["Not measured here:", f"{', '.join(refused)}: {reason}"]
    rows = dialog.results.viewport().height() // dialog.results.fontMetrics().lineSpacing()
    assert rows >= 12, rows
