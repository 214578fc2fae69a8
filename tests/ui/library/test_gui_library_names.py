"""Names and places in the lists, offscreen with real widgets: twins of one name told
apart in the Library, Measure Pack and Phone lists; packs added while sorted land in
order; a pack verified from the command line shows it when the window gets the focus."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.ui.library.library_model import COLUMNS
from app.ui.packmaking.measure_choices import MeasureChoices, look_at
from app.ui.phone.phone_models import PackList
from app.ui.shell.main_window import MainWindow
from tests.helpers.export_checks import record_check
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
NAME = "smol-draft-q4"


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        yield win


def _column(window: MainWindow, column: str) -> list[str]:
    proxy = window.library_page.proxy
    return [str(proxy.index(r, COLUMNS.index(column)).data()) for r in range(proxy.rowCount())]


def test_twins_of_one_name_are_told_apart_in_every_list(
    window: MainWindow,
    bundle_copy: Copy,
    tmp_path: Path,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    root = add_packs(window, bundle_copy, ("fast-draft",))
    bundle_copy("qwen3-target", root / NAME)
    linked = bundle_copy("fast-target", tmp_path / "x" / NAME)
    window.library.add_folder(linked)
    window.library_page.refresh()
    labels = [f"{NAME} (library)", f"{NAME} (linked: ~/x)"]
    assert _column(window, "Name") == ["fast-draft", *labels]

    # Measure Pack: the drafts (both twins can be one) and a draft's targets.
    entries = window.library.scan()
    choices = MeasureChoices()
    qtbot.addWidget(choices)
    choices.show_drafts(entries, None)
    box = choices.draft_box
    assert [box.itemText(i) for i in range(box.count())] == ["fast-draft", *labels]
    draft = next(e for e in entries if e.name == "fast-draft")
    assert [t.name for t in look_at(entries, draft).targets] == labels

    # The Phone page's library list: both twins, not one of them.
    packs = PackList()
    qtbot.addWidget(packs)
    packs.show_packs(entries)
    assert [packs.item(i).text() for i in range(packs.count())] == ["fast-draft", *labels]


def test_packs_added_while_sorted_take_their_place(
    window: MainWindow, bundle_copy: Copy, tmp_path: Path
) -> None:
    add_packs(window, bundle_copy, ())
    page = window.library_page
    for name in ("b-pack", "d-pack"):
        bundle_copy("fast-draft", window.library.root / name)
    page.refresh()
    page.add_paths([bundle_copy("fast-draft", tmp_path / "c-pack")])
    assert _column(window, "Name") == ["b-pack", "c-pack", "d-pack"]
    selected = page.selected_entry()
    assert selected is not None and selected.name == "c-pack"
    page.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    page.add_paths([bundle_copy("fast-draft", tmp_path / "a-pack")])
    assert _column(window, "Name") == ["d-pack", "c-pack", "b-pack", "a-pack"]


def test_a_check_recorded_from_the_command_line_shows_when_the_window_is_back(
    window: MainWindow, bundle_copy: Copy, qtbot: QtBot
) -> None:
    root = add_packs(window, bundle_copy, ("fast-draft",))
    assert _column(window, "Status") == ["OK"]
    said: list[str] = []
    window.library_page.message.connect(said.append)
    # `draftdeck verify-export` records its check beside the pack, as here, while the
    # user is in the terminal; then they come back to the window. No F5.
    record_check(root / "fast-draft", faithful=1.0, cost=0.95)
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowActivate))
    qtbot.waitUntil(lambda: _column(window, "Status") == ["OK, export verified"], timeout=10_000)
    assert said == []  # read by itself: nothing said over what the user reads
