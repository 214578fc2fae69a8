"""The Tune page and the phone: each row's forecast uplift on the window's phone, the
line "Best on the phone: d = N", and Apply Best writing only the forecast's length into
the phone's recipe (the rest into this computer's settings), undone as one."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.measure import phone_profiles
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
from app.core.measure.phone_forecast import PhoneForecast, pair_forecast
from app.core.measure.tune_plan import SweepPlan
from app.core.measure.tune_run import TuneRun, runs_dir
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop
from app.ui.base.phone_profile import percent
from app.ui.shell.main_window import MainWindow
from tests.helpers.tune_results import done_run, setting_result
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]
PHONE = "Samsung S26 Ultra (SM8850, published)"
# Acceptance by position as measured here: high at first, falling with the position.
TALLIES = PositionTallies((400, 330, 260, 190, 120, 60), (330, 260, 190, 120, 60, 25), True, 2000)


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(qtbot, bundle_copy, ("fast-target", "fast-draft"), "tune") as win:
        yield win


def _run(target: Path, draft: Path) -> TuneRun:
    """d = 1, 2, 4, 6 measured here; d = 6 clearly best here."""
    lengths = (1, 2, 4, 6)
    results = [setting_result(d, 1 + d / 10, 1 + d / 10 - 0.01, 1 + d / 10 + 0.01) for d in lengths]
    return TuneRun(str(target), str(draft), SweepPlan(draft_lengths=lengths), results=results)


def test_the_phone_column_and_line_follow_the_forecast_and_apply_writes_its_length(
    window: MainWindow, qtbot: QtBot
) -> None:
    page, model = window.tune_page, window.tune_page.model
    target, draft = window.library.root / "fast-target", window.library.root / "fast-draft"
    config = target / "config.json"
    (draft / ".draftdeck-drafting.json").write_text('{"adaptive": false, "stop_below": 0}')
    add_position_tallies(target, draft, TALLIES)
    phone_profiles.choose_device(PHONE)
    expected = pair_forecast(target, draft, PHONE)
    assert isinstance(expected, PhoneForecast)
    path = runs_dir() / "phone.json"
    _run(target, draft).save(path)
    page.open_run(path)
    column = model.KEYS.index("phone_uplift")
    qtbot.waitUntil(lambda: not page.table.isColumnHidden(column))

    # Each fixed row: the forecast's uplift at its length, the best starred; d = 6 too.
    for row, d in enumerate((1, 2, 4, 6)):
        shown = model.index(row, column).data()
        text = percent(expected.row(d).uplift)
        assert shown == (f"{text} ★" if d == expected.best_draft_length else text)
        tip = model.index(row, column).data(Qt.ItemDataRole.ToolTipRole)
        assert f"On {PHONE}, by the forecast (not measured there)" in tip
    line = page.results.phone_label
    assert line.isVisible()
    assert line.text() == (
        f"Best on the phone ({PHONE}, by the forecast): d = {expected.best_draft_length}."
    )
    assert "only the acceptance by draft position carries over" in line.toolTip()

    # Apply: the phone's recipe gets the forecast's length, this computer d = 6.
    before = config.read_bytes()
    assert "draft_predict_length" not in json.loads(before)  # the pack names none
    page.apply_button.click()
    box = page.confirm_box
    assert (
        "On the phone: fast-target/config.json draft_predict_length (unset)"
        f" → {expected.best_draft_length} (best on {PHONE} by the forecast)"
    ) in box.text()
    assert f"Best on the phone ({PHONE}, by the forecast)" in box.text()
    next(b for b in box.buttons() if b.text() == "Apply").click()
    assert json.loads(config.read_text())["draft_predict_length"] == expected.best_draft_length
    here = read_desktop(target).of("config.json")
    assert here.get("draft_predict_length", expected.best_draft_length) == 6
    page.undo_button.click()
    assert config.read_bytes() == before
    assert not (target / THIS_COMPUTER_FILE).exists()


def test_the_phone_column_fits_at_1024(window: MainWindow, qtbot: QtBot) -> None:
    page, model, table = window.tune_page, window.tune_page.model, window.tune_page.table
    target, draft = window.library.root / "fast-target", window.library.root / "fast-draft"
    add_position_tallies(target, draft, TALLIES)
    phone_profiles.choose_device(PHONE)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.size().width() == 1024)
    path = runs_dir() / "phone.json"
    _run(target, draft).save(path)
    page.open_run(path)
    column = model.KEYS.index("phone_uplift")
    qtbot.waitUntil(lambda: not table.isColumnHidden(column))
    assert table.horizontalScrollBar().value() == 0
    for key in ("uplift", "uplift_interval", "phone_uplift", "pairs"):
        at = model.KEYS.index(key)
        right = table.columnViewportPosition(at) + table.columnWidth(at)
        assert 0 < right <= table.viewport().width(), key
    qtbot.waitUntil(lambda: table.verticalScrollBar().maximum() == 0)  # every row in view


def test_the_phone_s_length_alone_when_the_best_here_is_current(
    window: MainWindow, qtbot: QtBot
) -> None:
    """The best here (d = 3) is what runs here already; the forecast's length still goes
    to the phone's recipe, and this computer keeps d = 3."""
    page = window.tune_page
    target, draft = window.library.root / "fast-target", window.library.root / "fast-draft"
    add_position_tallies(target, draft, TALLIES)
    phone_profiles.choose_device(PHONE)
    expected = pair_forecast(target, draft, PHONE)
    assert isinstance(expected, PhoneForecast) and expected.best_draft_length != 3
    path = runs_dir() / "done.json"
    done_run(window.library.root).save(path)
    page.open_run(path)
    note = page.apply_bar.note
    qtbot.waitUntil(lambda: note.text().startswith("Apply Best writes only"))
    assert page.apply_button.isEnabled()
    assert note.text().endswith(
        "Not here: the best (draft length 3) is the current recipe already."
    )
    page.apply_button.click()
    next(b for b in page.confirm_box.buttons() if b.text() == "Apply").click()
    config = json.loads((target / "config.json").read_text())
    assert config["draft_predict_length"] == expected.best_draft_length
    assert read_desktop(target).of("config.json") == {"draft_predict_length": 3}
    page.undo_button.click()
    assert "draft_predict_length" not in json.loads((target / "config.json").read_text())


def test_a_phone_shown_first_but_not_chosen_decides_nothing(
    window: MainWindow, qtbot: QtBot
) -> None:
    """The Pair page shows the first profile until one is chosen; Tune waits for a choice
    before it writes a length into the phone's recipe."""
    page = window.tune_page
    target, draft = window.library.root / "fast-target", window.library.root / "fast-draft"
    add_position_tallies(target, draft, TALLIES)
    assert phone_profiles.chosen_device() is None
    path = runs_dir() / "phone.json"
    _run(target, draft).save(path)
    page.open_run(path)
    line = page.results.phone_label
    qtbot.waitUntil(line.isVisible)
    assert line.text() == "Best on the phone: no phone chosen (choose yours on the Pair page)."
    assert page.table.isColumnHidden(page.model.KEYS.index("phone_uplift"))
    page.apply_button.click()
    box = page.confirm_box
    assert "On the phone" not in box.text()
    assert "No phone is chosen" in box.text()
    # Answered, so no box is left open for the tests after this one.
    next(b for b in box.buttons() if b.text() == "Cancel").click()
    assert not box.isVisible()
