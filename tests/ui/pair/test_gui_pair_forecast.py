"""The Pair page's phone part offscreen: the phone profile chooser, the forecast table,
measuring the pair's acceptance here with real MNN (progress, Cancel), and the memory
check with the phone's RAM beside this computer's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem
from pytestqt.qtbot import QtBot

from app.core.infra.units import format_bytes
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies, read_tallies
from app.core.measure.phone_profiles import chosen_device, device_names, pack_ref
from app.core.measure.phone_results import add_result
from app.ui.pair.forecast_state import BEST, NO_ACCEPTANCE, MeasureProgress, work_out
from app.ui.pair.pair_page import PairPage
from app.ui.shell.main_window import MainWindow
from tests.fake_phone import FakePhone
from tests.helpers.windows import open_on_page

Copy = Callable[..., Path]
PAIR = ("fast-target", "fast-draft")


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_on_page(qtbot, bundle_copy, PAIR, "pair") as win:
        page = win.pair_page
        qtbot.waitUntil(lambda: page.phone.combo.count() > 0, timeout=10_000)
        qtbot.waitUntil(lambda: _shown_device(page) is not None, timeout=10_000)
        yield win


def _shown_device(page: PairPage) -> str | None:
    shown = page.phone.panel.shown
    return shown.device if shown is not None else None


def _pair(window: MainWindow) -> tuple[Path, Path]:
    root = window.library.root
    return root / PAIR[0], root / PAIR[1]


def _done(progress: MeasureProgress) -> int:
    return progress.done


def _item(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    item = table.item(row, column)
    assert item is not None
    return item


def _wait_forecast(qtbot: QtBot, page: PairPage) -> None:
    qtbot.waitUntil(lambda: bool(page.phone.panel.shown and page.phone.panel.shown.rows))


def test_the_phone_chooser_offers_the_profiles_and_keeps_the_choice(
    qtbot: QtBot, window: MainWindow
) -> None:
    page = window.pair_page
    combo = page.phone.combo
    names = device_names()
    assert [combo.itemText(i) for i in range(combo.count())] == names
    assert combo.currentText() == names[0] and chosen_device() is None  # the default
    buddy = [w for w in page.phone.findChildren(type(page.card.title)) if w.buddy() is combo]
    assert [w.text() for w in buddy] == ["Ph&one:"]  # Alt+O reaches it
    assert page.tabs.tabText(0) == "Fo&recast on a Phone"
    page.phone.choose(names[1])
    qtbot.waitUntil(lambda: chosen_device() == names[1])
    assert page.phone.panel.shown is not None
    qtbot.waitUntil(lambda: page.phone.panel.title.text().startswith(f"Forecast on {names[1]}"))


def test_measure_the_acceptance_here_then_the_forecast(qtbot: QtBot, window: MainWindow) -> None:
    page = window.pair_page
    panel = page.phone.panel
    assert panel.reason.text() == NO_ACCEPTANCE and panel.reason.isVisible()
    assert panel.measure_button.isVisible() and not panel.table.isVisible()
    seen: list[int] = []  # tokens measured at each report
    page.phone.measure.progressed.connect(lambda p: seen.append(_done(p)))
    panel.measure_button.click()
    assert page.phone.measure.running and panel.cancel_button.isVisible()
    assert "of fast-target + fast-draft on this computer: prompt 1 of 3" in (
        panel.progress_label.text()
    )
    assert not panel.measure_button.isEnabled()
    qtbot.waitUntil(lambda: not page.phone.measure.running, timeout=120_000)
    assert panel.progress_label.text().startswith("Measured "), panel.progress_label.text()
    assert seen and max(seen) > 0 and seen == sorted(seen)  # progress only goes on
    tallies = read_tallies(*_pair(window))
    assert tallies is not None and tallies.tokens > 0
    assert tallies.exact  # the desktop recipe's memory normal: the verify is exact
    assert len(tallies.reached) == 6 and tallies.reached[0] > 0  # drafting 6 a round
    assert panel.progress_label.text() == (
        f"Measured {tallies.tokens:,} tokens of fast-target + fast-draft on this computer."
    )
    _wait_forecast(qtbot, page)
    assert not panel.cancel_button.isVisible() and not panel.measure_button.isVisible()
    shown = work_out(*_pair(window), page.phone.device())
    table = panel.table
    assert table.isVisible() and table.rowCount() == 6
    cells = [[_item(table, r, c).text() for c in range(table.columnCount())] for r in range(6)]
    assert cells == [list(row) for row in shown.rows]
    best = shown.best_draft_length
    assert cells[best - 1][-1] == BEST and _item(table, best - 1, 0).font().bold()
    assert panel.assumptions.isVisible() and shown.assumptions[0][:40] in panel.assumptions.text()
    assert "measured on this computer" in panel.source.text()


def test_cancel_stops_the_measurement(qtbot: QtBot, window: MainWindow) -> None:
    page = window.pair_page
    panel = page.phone.panel
    panel.measure_button.click()
    assert page.phone.measure.running
    panel.cancel_button.click()
    assert not page.phone.measure.running and page.phone.measure.bridge is None
    assert "cancelled" in panel.progress_label.text()
    assert not panel.cancel_button.isVisible() and not panel.progress.isVisible()
    assert panel.measure_button.isEnabled()


def test_the_attached_phones_ram_beside_this_computers(
    qtbot: QtBot, phone: FakePhone, bundle_copy: Copy
) -> None:
    with open_on_page(qtbot, bundle_copy, PAIR, "pair") as window:
        label = window.pair_page.memory_label
        ram = format_bytes(7_864_320 * 1024)  # the fake phone's MemTotal
        qtbot.waitUntil(lambda: "On Pixel 8" in label.text(), timeout=20_000)
        here, there = label.text().split("\n")
        assert here.startswith("On this computer: this pair needs about ")
        assert there.startswith("On Pixel 8: the pair needs ")
        assert there.endswith(f"the phone has {ram} of RAM (read from the attached phone).")
        assert "Memory on Pixel 8" in label.toolTip()  # every figure, as a push says it
        assert label.property("level") == "fits"


def test_a_recorded_phone_too_small_for_the_pair(qtbot: QtBot, bundle_copy: Copy) -> None:
    def record(root: Path) -> None:
        target, draft = pack_ref(root / PAIR[0]), pack_ref(root / PAIR[1])
        add_result("Tiny phone", target, draft, 10.0, 14.0, 3, phone_ram=2 * 1024**2)

    with open_on_page(qtbot, bundle_copy, PAIR, "pair", prepare=record) as window:
        page = window.pair_page
        label = page.memory_label
        qtbot.waitUntil(lambda: "Tiny phone" in label.text(), timeout=20_000)
        assert page.phone.combo.currentText() == "Tiny phone"  # recorded phones first
        there = label.text().split("\n")[1]
        assert there.startswith("✕ On Tiny phone, not enough memory: the pair needs ")
        assert there.endswith("the phone has 2.0 MB of RAM (stored with its recorded results).")
        assert label.property("level") == "too_big"  # the worse of the two lines


def test_acceptance_measured_elsewhere_shows_when_the_page_is_shown_again(
    qtbot: QtBot, window: MainWindow
) -> None:
    page = window.pair_page
    assert page.phone.panel.shown is not None and page.phone.panel.shown.needs_acceptance
    window.show_page("library")
    tallies = PositionTallies((100, 80, 60, 40, 30, 20), (80, 60, 40, 30, 20, 10), True, 400)
    add_position_tallies(*_pair(window), tallies)  # as a greedy reply in Chat adds them
    window.show_page("pair")
    _wait_forecast(qtbot, page)
    assert not page.phone.panel.measure_button.isVisible()
    assert "400 tokens" in page.phone.panel.source.text()
