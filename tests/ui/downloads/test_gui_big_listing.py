"""The Downloads page's file table: a real item model, a 100,000-file listing, and the
files a stranger's repo names like DraftDeck's own (local Hub stand-in, offscreen)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.hub.plan import OWN_NAME_REASON, PLUMBING_REASON, PlanFile, build_plan
from app.core.infra.units import format_bytes
from app.ui.downloads.plan_model import FILE_ROLE, PlanModel
from app.ui.shell.main_window import MainWindow
from tests.core.test_hub_strangers_files import BIG, BIG_COUNT, big_listing
from tests.helpers.plan_rows import plan_rows
from tests.hub_server import FakeHub

Fixture = Callable[[str], Path]
STRANGER = "stranger/own-names-MNN"


def _add(window: MainWindow, repo: str) -> None:
    page = window.downloads_page
    page.add_edit.setText(repo)
    page.add_button.click()


def test_the_plan_model_passes_the_model_tester(qtmodeltester: object) -> None:
    entries = [
        PlanFile("llm.mnn.weight", 5 << 20, None, "ab" * 32),
        PlanFile("config.json", 120, "cd" * 20, None),
        PlanFile(".git/config", 12, "ef" * 20, None),
    ]
    model = PlanModel()
    model.set_plan(build_plan("someone/pack-MNN", "0" * 40, entries))
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert plan_rows(model) == [
        ("config.json", "120 B", "git blob", ""),
        ("llm.mnn.weight", "5.0 MB", "LFS sha256", ""),
        (".git/config", "12 B", "git blob", f"skipped: {PLUMBING_REASON}"),
    ]
    model.set_plan(None)
    qtmodeltester.check(model)  # type: ignore[attr-defined]


def test_a_hundred_thousand_files_are_all_rows_with_the_right_totals(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    files = big_listing()
    hub.add_repo(BIG, files)
    page = window.downloads_page
    _add(window, BIG)
    model = page.files_model
    qtbot.waitUntil(lambda: model.rowCount() == BIG_COUNT, timeout=120_000)
    total = sum(len(content) for content in files.values())
    shown = [model.index(r, 0).data(FILE_ROLE) for r in range(model.rowCount())]
    assert sum(f.size for f in shown) == total
    assert {f.path for f in shown} == set(files)
    assert f"100,000 files, {format_bytes(total)}" in page.details.toPlainText()
    assert page.files_view.isVisible() and page.download_button.isEnabled()
    last = model.rowCount() - 1
    assert model.index(last, 0).data() == "shard099/f099999.txt"
    assert model.index(last, 1).data() == format_bytes(len(files["shard099/f099999.txt"]))


def test_the_page_lists_strangers_files_as_skipped_with_why(
    window: MainWindow, qtbot: QtBot, hub: FakeHub, fixture_bundle: Fixture
) -> None:
    pack = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    hub.add_repo(STRANGER, {**pack, ".draftdeck-pack.json": b"{}", "config_cpu.json.bak": b"{}"})
    page = window.downloads_page
    _add(window, STRANGER)
    qtbot.waitUntil(lambda: page.files_model.rowCount() == len(pack) + 2, timeout=20_000)
    notes = {row[0]: row[3] for row in plan_rows(page.files_model)}
    assert (
        notes[".draftdeck-pack.json"]
        == notes["config_cpu.json.bak"]
        == (f"skipped: {OWN_NAME_REASON}")
    )
    assert all(notes[name] == "" for name in pack)
    text = page.details.toPlainText()
    assert f"{len(pack)} files" in text
    assert (
        "Skipped (not fetched; the list says why): .draftdeck-pack.json, config_cpu.json.bak"
        in (text)
    )
