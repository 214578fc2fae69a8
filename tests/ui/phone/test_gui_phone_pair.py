"""The Phone page pushes the pair chosen on the Pair page as a pair (the target's
config.json on the phone names the draft), asks before pushing a target whose draft is
not there, refuses what the phone's RAM cannot hold, and shows the phone-side recipe
check. Real adb server, fake phone, real window offscreen."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.core.infra.paths import app_dirs
from app.core.phone.push import DONE, FAILED
from app.ui.shell.main_window import MainWindow
from tests.fake_phone import FakePhone
from tests.helpers.phone_window import ROOT, phone_window

Copy = Callable[..., Path]
LINK = f"{ROOT}/fast-draft/config_cpu.json"


@pytest.fixture
def window(qtbot: QtBot, phone: FakePhone, bundle_copy: Copy) -> Iterator[MainWindow]:
    with phone_window(qtbot, bundle_copy) as win:
        library = app_dirs().default_library
        target = bundle_copy("fast-target", library / "fast-target")
        config = target / "config.json"
        data = {**json.loads(config.read_text()), "speculative_type": "draftmodel"}
        config.write_text(json.dumps(data, indent=4))
        page = win.phone_page
        page.watch.reload_library()
        qtbot.waitUntil(lambda: page.pack_list.count() == 2, timeout=10_000)
        page.device_list.setCurrentRow(0)
        yield win


def _choose_pair(window: MainWindow) -> tuple[Path, Path]:
    library = app_dirs().default_library
    target, draft = library / "fast-target", library / "fast-draft"
    window.selection.select(target, draft)
    window.phone_page._update_buttons()  # as when the page is shown again
    return target, draft


def _wait_rows_done(qtbot: QtBot, window: MainWindow, rows: int) -> None:
    model = window.phone_page.push_queue.model
    qtbot.waitUntil(
        lambda: (
            model.rowCount() == rows
            and all(model.status(r).state in (DONE, FAILED) for r in range(rows))
        ),
        timeout=20_000,
    )


def _phone_config(phone: FakePhone) -> dict[str, object]:
    data: dict[str, object] = json.loads(phone.local(f"{ROOT}/fast-target/config.json").read_text())
    return data


def _select_library_pack(window: MainWindow, name: str) -> None:
    packs = window.phone_page.pack_list
    row = next(i for i in range(packs.count()) if packs.item(i).text() == name)
    packs.setCurrentRow(row)


def test_push_pair_pushes_the_chosen_pair_linked(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    assert not page.pair_button.isEnabled()
    assert page.pair_label.text().startswith("Choose a target and a draft on the Pair page")
    _choose_pair(window)
    assert page.pair_label.text() == (
        "Pair: fast-target with the draft fast-draft (chosen on the Pair page)"
    )
    assert page.pair_button.isEnabled()
    page.pair_button.click()
    assert window.statusBar().currentMessage() == "Pushing fast-draft and fast-target to Pixel 8"
    _wait_rows_done(qtbot, window, 2)
    model = page.push_queue.model
    assert [model.status(r).pack for r in range(2)] == ["fast-draft", "fast-target"]
    assert all(model.status(r).state == DONE for r in range(2))
    assert _phone_config(phone)["draft_config_path"] == LINK
    details = model.index(1, model.COLUMNS.index("Details"))
    assert details.data().endswith(f" · draft_config_path {LINK}")
    assert "Memory on Pixel 8: the pair needs" in details.data(Qt.ItemDataRole.ToolTipRole)
    qtbot.waitUntil(lambda: "names the draft at" in window.statusBar().currentMessage())
    assert window.statusBar().currentMessage().startswith("fast-target is on Pixel 8")

    # The phone-side check of the target: the same recipes, its draft there, the RAM.
    qtbot.waitUntil(lambda: page.packs_model.rowCount() == 2, timeout=10_000)
    names = [p.name for p in page.packs_model.packs]
    page.packs_view.selectRow(names.index("fast-target"))
    text = page.check.label.text()
    assert "Recipes: the same as the library's." in text
    assert f"draft_config_path: {LINK} (is on the phone)" in text
    assert "Memory on Pixel 8: the pair needs" in text
    assert not page.check.match_button.isEnabled()


def test_a_target_pushed_alone_asks_to_push_its_draft_and_the_check_brings_recipes_in_line(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    target, _draft = _choose_pair(window)
    qtbot.waitUntil(lambda: page.listed is not None, timeout=10_000)  # the folder is read
    _select_library_pack(window, "fast-target")
    page.push_button.click()
    box = page.findChild(QMessageBox, "choiceDialog")
    assert box is not None and "fast-draft" in box.text() and "is not on Pixel 8" in box.text()
    next(b for b in box.buttons() if b.text() == "Push Both").click()
    _wait_rows_done(qtbot, window, 2)
    assert _phone_config(phone)["draft_config_path"] == LINK

    # The library's target moves on; the check says how, and one button brings it in line.
    config = target / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "thread_num": 68}))
    page.refresh_phone()
    qtbot.waitUntil(
        lambda: [p.match for p in page.packs_model.packs] == ["same", "differs"],
        timeout=10_000,
    )
    page.packs_view.selectRow(1)
    assert "config.json: thread_num: 4 → 68" in page.check.label.text()
    library_cell = page.packs_model.index(1, page.packs_model.COLUMNS.index("Library"))
    tip = library_cell.data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("config.json: thread_num: 4 → 68\n")
    assert page.check.match_button.isEnabled()
    page.check.match_button.click()
    _wait_rows_done(qtbot, window, 3)
    assert page.push_queue.model.status(2).recipe_only
    assert _phone_config(phone)["thread_num"] == 68
    assert _phone_config(phone)["draft_config_path"] == LINK  # the link stays
    qtbot.waitUntil(
        lambda: [p.match for p in page.packs_model.packs] == ["same", "same"], timeout=10_000
    )

    # With its draft on the phone, the target alone is linked to it without asking.
    config.write_text(json.dumps({**json.loads(config.read_text()), "thread_num": 4}))
    _select_library_pack(window, "fast-target")
    page.push_button.click()
    assert page.findChild(QMessageBox, "choiceDialog") is None or not any(
        b.isVisible() for b in page.findChildren(QMessageBox, "choiceDialog")
    )
    _wait_rows_done(qtbot, window, 4)
    assert page.push_queue.model.status(3).link == LINK
    assert _phone_config(phone)["thread_num"] == 4


def test_a_pair_the_phone_cannot_hold_is_refused_with_the_numbers(
    qtbot: QtBot, window: MainWindow, phone: FakePhone
) -> None:
    page = window.phone_page
    phone.local("/proc/meminfo").write_text("MemTotal:       1024 kB\n")
    _choose_pair(window)
    page.pair_button.click()
    _wait_rows_done(qtbot, window, 2)
    model = page.push_queue.model
    assert [model.status(r).state for r in range(2)] == [FAILED, FAILED]
    assert model.status(0).error.startswith("Not enough memory on Pixel 8: the pair needs")
    assert "has 1.0 MB of RAM" in model.status(0).error
    assert not phone.local(f"{ROOT}/fast-draft").exists()
