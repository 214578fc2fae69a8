"""The Phone page's recorded results offscreen, against the real adb server and the fake
phone: recording what TokForge showed, the forecast kept beside it, Delete and Undo."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox, QLabel
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
from app.core.measure.phone_forecast import PhoneForecast, pair_forecast
from app.core.measure.phone_results import list_results
from app.ui.phone.phone_results_panel import EMPTY
from app.ui.phone.record_result_dialog import RecordResultDialog, index_of
from app.ui.shell.main_window import MainWindow
from tests.fake_phone import FakePhone
from tests.helpers.phone_window import phone_window

Copy = Callable[..., Path]
RAM = 7_864_320 * 1024  # the fake phone's MemTotal
TALLIES = PositionTallies(
    (1000, 700, 490, 343, 240, 168), (700, 490, 343, 240, 168, 118), True, 5000
)


@pytest.fixture
def window(qtbot: QtBot, phone: FakePhone, bundle_copy: Copy) -> Iterator[MainWindow]:
    with phone_window(qtbot, bundle_copy) as win:
        bundle_copy("fast-target", app_dirs().default_library / "fast-target")
        page = win.phone_page
        page.watch.reload_library()
        qtbot.waitUntil(lambda: page.pack_list.count() == 2, timeout=10_000)
        page.device_list.setCurrentRow(0)
        qtbot.waitUntil(lambda: page.results.current_phone() == "Pixel 8", timeout=10_000)
        yield win


def _record(qtbot: QtBot, window: MainWindow, plain: float, spec: float, d: int) -> None:
    panel = window.phone_page.results
    rows = panel.model.rowCount()
    dialog = panel.open_record()
    assert isinstance(dialog, RecordResultDialog)
    assert dialog.phone.text() == "Pixel 8"
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    library = app_dirs().default_library
    dialog.target.setCurrentIndex(index_of(dialog.target, library / "fast-target"))
    dialog.draft.setCurrentIndex(index_of(dialog.draft, library / "fast-draft"))
    assert not ok.isEnabled() and "both speeds" in dialog.problem.text()
    dialog.plain.setValue(plain)
    dialog.spec.setValue(spec)
    dialog.draft_length.setValue(d)
    assert ok.isEnabled() and dialog.problem.text() == ""
    ok.click()
    qtbot.waitUntil(lambda: panel.model.rowCount() == rows + 1, timeout=10_000)


def test_record_a_result_with_the_forecast_made_before(qtbot: QtBot, window: MainWindow) -> None:
    panel = window.phone_page.results
    assert panel.note.text() == EMPTY and panel.model.rowCount() == 0
    buddies = [w.text() for w in panel.findChildren(QLabel) if w.buddy() is panel.phone]
    assert buddies == ["Recorded res&ults on"]  # Alt+U reaches the phone chooser
    _record(qtbot, window, 10.0, 14.0, 3)
    (first,) = list_results("Pixel 8")
    assert (first.plain_tok_s, first.spec_tok_s, first.draft_length) == (10.0, 14.0, 3)
    assert first.phone_ram == RAM  # the attached phone's, kept with its result
    assert (first.target.name, first.draft.name) == ("fast-target", "fast-draft")
    assert first.forecast is None  # no acceptance measured for the pair yet
    row = [panel.model.index(0, c).data() for c in range(panel.model.columnCount())]
    assert row[1:] == [
        "fast-target + fast-draft",
        "3",
        "10.0 → 14.0 tok/s (+40 %)",
        "none could be made then",
    ]
    assert not panel.note.isVisible()

    # With acceptance measured, the phone's own result gives the next forecast: at the
    # same length it says 14.0 tok/s again, and the table says how far that was off.
    library = app_dirs().default_library
    add_position_tallies(library / "fast-target", library / "fast-draft", TALLIES)
    expected = pair_forecast(library / "fast-target", library / "fast-draft", "Pixel 8")
    assert isinstance(expected, PhoneForecast)
    assert expected.row(3).spec_tok_s == pytest.approx(14.0)
    _record(qtbot, window, 10.0, 12.5, 3)
    assert panel.model.index(0, 4).data() == "14.0 tok/s: 12 % too high"  # 14 / 12.5
    tip = panel.model.index(0, 4).data(3)  # ToolTipRole
    assert "Pixel 8" in tip and "+25 %" in tip


def test_delete_then_undo(qtbot: QtBot, window: MainWindow) -> None:
    panel = window.phone_page.results
    _record(qtbot, window, 10.0, 14.0, 3)
    _record(qtbot, window, 10.0, 13.0, 4)
    assert not panel.delete_button.isEnabled()  # nothing selected
    panel.view.selectRow(1)  # the older one: latest first
    gone, kept = list_results("Pixel 8")  # oldest first: the row selected, the other
    assert panel.delete_button.isEnabled()
    panel.delete_button.click()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=10_000)
    assert [r.id for r in list_results("Pixel 8")] == [kept.id]
    assert panel.undo_button.isVisible()
    panel.undo_button.click()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=10_000)
    (back,) = [r for r in list_results("Pixel 8") if r.id != kept.id]
    assert (back.date, back.spec_tok_s, back.draft_length) == (gone.date, 14.0, 3)
    assert not panel.undo_button.isVisible()
