"""The catalog's Role and Family of an installed pack are the Library's: read from its
files as the Library reads them, not guessed from the repo's name (a target named as
most are read "unknown" twice while the Library read it fine)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.hub.job import DONE
from app.ui.downloads.download_models import CatalogModel
from app.ui.library.library_model import COLUMNS as LIBRARY_COLUMNS
from app.ui.shell.main_window import MainWindow
from tests.hub_server import FakeHub

Fixture = Callable[[str], Path]
# A 2025 export: no model_type, so the Library infers the family (and says so).
REPO, FIXTURE = "someone/Tiny-Target-MNN", "era-3.1.4"


def _catalog_cells(window: MainWindow) -> tuple[str, str]:
    model = window.downloads_page.catalog_model
    row = next(i for i, e in enumerate(model.entries) if e.repo_id == REPO)
    role, family = (CatalogModel.COLUMNS.index(c) for c in ("Role", "Family"))
    return model.index(row, role).data(), model.index(row, family).data()


def _library_cells(window: MainWindow, name: str) -> tuple[str, str]:
    page = window.library_page
    page.refresh()
    row = next(r for r in range(page.proxy.rowCount()) if page.proxy.index(r, 0).data() == name)
    role, family = (LIBRARY_COLUMNS.index(c) for c in ("Role", "Family"))
    return page.proxy.index(row, role).data(), page.proxy.index(row, family).data()


def _repos(window: MainWindow) -> list[str]:
    proxy = window.downloads_page.catalog_proxy
    return [str(proxy.index(r, 0).data()) for r in range(proxy.rowCount())]


def test_an_installed_pack_shows_the_library_s_role_and_family(
    window: MainWindow, qtbot: QtBot, hub: FakeHub, fixture_bundle: Fixture
) -> None:
    page = window.downloads_page
    hub.add_folder(REPO, fixture_bundle(FIXTURE))
    page.add_edit.setText(REPO)
    page.add_button.click()
    assert _catalog_cells(window) == ("unknown", "unknown")  # the name's guess
    page.start_download(REPO)
    model = page.queue_model
    qtbot.waitUntil(lambda: model.rowCount() > 0 and model.status(0).state == DONE, timeout=20_000)
    shown = _library_cells(window, "Tiny-Target-MNN")
    assert shown == ("either", "qwen3 (inferred)")
    qtbot.waitUntil(lambda: _catalog_cells(window) == shown, timeout=10_000)
    # The filters go by what the rows show.
    page.role_filter.setCurrentText("either")
    assert _repos(window) == [REPO]
    page.role_filter.setCurrentIndex(0)
    page.family_filter.setCurrentText("qwen3")
    assert REPO in _repos(window)
