"""The Downloads page offscreen, against the local Hub stand-in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.hub.job import DONE, FAILED
from app.core.infra.settings import load_settings
from app.ui.downloads.download_models import QueueModel
from app.ui.shell.main_window import MainWindow
from tests.conftest import DRAFT_REPO
from tests.helpers.plan_rows import plan_rows, shown_files
from tests.hub_server import FakeHub

Fixture = Callable[[str], Path]
REPO = DRAFT_REPO


def _repos(window: MainWindow) -> list[str]:
    proxy = window.downloads_page.catalog_proxy
    return [str(proxy.index(r, 0).data()) for r in range(proxy.rowCount())]


def _wait_state(qtbot: QtBot, window: MainWindow, state: str, row: int = 0) -> None:
    model = window.downloads_page.queue_model
    qtbot.waitUntil(
        lambda: model.rowCount() > row and model.status(row).state == state, timeout=20_000
    )


def test_catalog_filters(window: MainWindow, qtmodeltester: object) -> None:
    page = window.downloads_page
    qtmodeltester.check(page.catalog_model)  # type: ignore[attr-defined]
    assert REPO in _repos(window) and "taobao-mnn/Qwen3-8B-MNN" in _repos(window)
    page.role_filter.setCurrentText("target")
    assert all(r.startswith("taobao-mnn/") for r in _repos(window))
    page.role_filter.setCurrentIndex(0)
    page.family_filter.setCurrentText("qwen3_5")
    assert _repos(window) == ["darkmaniac7/Qwen3.5-0.8B-lk-alpha-ep4-MNN"]
    page.family_filter.setCurrentIndex(0)
    page.search.setText("acceleration")
    assert _repos(window) == ["darkmaniac7/TokForge-AccelerationPack-Draft"]


def test_plan_then_download_installs_into_the_library(
    window: MainWindow, qtbot: QtBot, qtmodeltester: object
) -> None:
    page = window.downloads_page
    page.select_repo(REPO)
    qtbot.waitUntil(lambda: "llm.mnn.weight" in shown_files(page.files_model), timeout=10_000)
    assert ("llm.mnn.weight", "LFS sha256") in [r[::2] for r in plan_rows(page.files_model)]
    page.download_button.click()
    _wait_state(qtbot, window, DONE)
    qtmodeltester.check(page.queue_model)  # type: ignore[attr-defined]
    installed = window.library.root / "Qwen3-0.6B-kl-baseline-20k-MNN"
    assert (installed / "llm.mnn.weight").is_file()
    names = [
        window.library_page.proxy.index(r, 0).data()
        for r in range(window.library_page.proxy.rowCount())
    ]
    assert "Qwen3-0.6B-kl-baseline-20k-MNN" in names
    row = page.catalog_model.entries.index(
        next(e for e in page.catalog_model.entries if e.repo_id == REPO)
    )
    assert page.catalog_model.installed[REPO] == "installed"
    assert page.catalog_model.index(row, 3).data() == "installed"
    status = page.queue_model.status(0)
    assert status.fraction == 1.0 and status.done_bytes == status.total_bytes
    progress = page.queue_model.index(0, QueueModel.COLUMNS.index("Progress")).data()
    assert progress == "100%"


def test_failure_shows_the_error_and_retry_resumes(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    page = window.downloads_page
    hub.corrupt.add("llm.mnn.weight")
    page.start_download(REPO)
    _wait_state(qtbot, window, FAILED)
    details = page.queue_model.index(0, QueueModel.COLUMNS.index("Details")).data()
    assert "do not match" in details
    assert not (window.library.root / "Qwen3-0.6B-kl-baseline-20k-MNN").exists()
    hub.corrupt.clear()
    before = {name: n for name, n in hub.bytes_served.items() if name != "llm.mnn.weight"}
    assert before, "files before the weight were fetched"
    page.queue_view.selectRow(0)
    page.retry_button.click()
    _wait_state(qtbot, window, DONE)
    # Resumed: the files verified in the first attempt were not fetched again.
    assert {name: hub.bytes_served[name] for name in before} == before


def test_pause_and_cancel_buttons(window: MainWindow, qtbot: QtBot, hub: FakeHub) -> None:
    page = window.downloads_page
    hub.throttle_bytes_per_s = 50_000
    page.start_download(REPO)
    qtbot.waitUntil(lambda: page.queue_model.status(0).done_bytes > 0, timeout=10_000)
    page.queue_view.selectRow(0)
    page.pause_button.click()
    _wait_state(qtbot, window, "paused")
    page.cancel_button.click()
    qtbot.waitUntil(
        lambda: not any(p.name.startswith(".download-") for p in window.library.root.iterdir()),
        timeout=30_000,
    )
    page.clear_button.click()
    assert page.queue_model.rowCount() == 0


def test_refresh_from_hub_and_add_repo(window: MainWindow, qtbot: QtBot, hub: FakeHub) -> None:
    page = window.downloads_page
    hub.add_collection(
        "darkmaniac7/tokforge-mobile-draft-models-69c36153ea7084ce78329665",
        "TokForge Mobile Draft Models",
        ["someone/fresh-draft-MNN"],
    )
    assert page.age_label.text() == "Hub listing: never fetched"
    page.refresh_button.click()
    qtbot.waitUntil(lambda: "someone/fresh-draft-MNN" in _repos(window), timeout=10_000)
    assert "old" in page.age_label.text()
    page.add_edit.setText("me/my-own-pack")
    page.add_button.click()
    assert "me/my-own-pack" in _repos(window)
    assert load_settings().extra_repos == ["me/my-own-pack"]
    page.add_edit.setText("../../etc")
    page.add_button.click()
    assert "../../etc" not in _repos(window)


def test_update_available_badge(
    window: MainWindow, qtbot: QtBot, hub: FakeHub, fixture_bundle: Fixture
) -> None:
    page = window.downloads_page
    page.start_download(REPO)
    _wait_state(qtbot, window, DONE)
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    files["README.md"] = b"new\n"
    hub.add_repo(REPO, files)
    page.check_updates()
    qtbot.waitUntil(
        lambda: page.catalog_model.installed.get(REPO) == "update available", timeout=10_000
    )
    # Another download finishing keeps the badge; updating the pack clears it.
    hub.add_folder("me/other-pack", fixture_bundle("fast-draft"))
    page.start_download("me/other-pack")
    _wait_state(qtbot, window, DONE, row=1)
    assert page.catalog_model.installed.get("me/other-pack") == "installed"
    assert page.catalog_model.installed.get(REPO) == "update available"
    page.start_download(REPO)
    _wait_state(qtbot, window, DONE, row=2)
    assert page.catalog_model.installed.get(REPO) == "installed"


def test_offline_refresh_and_listing_say_no_connection_in_plain_words(
    window: MainWindow, qtbot: QtBot, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = window.downloads_page
    # The Hub stand-in stopped: nothing listens on its port any more (connection refused).
    closed = hub.endpoint
    hub.close()
    monkeypatch.setenv("HF_ENDPOINT", closed)
    page.refresh_button.click()
    qtbot.waitUntil(lambda: "No connection" in page.age_label.text(), timeout=20_000)
    text = page.age_label.text()
    assert text.startswith("No connection to 127.0.0.1:") and "check the network" in text
    assert "showing the repositories that ship with DraftDeck" in text
    assert "Errno" not in text and "darkmaniac7/" not in text
    assert "refused" in page.age_label.toolTip().lower()  # the technical reason, kept
    assert window.statusBar().currentMessage() == text
    # An endpoint whose name does not resolve (.invalid never does), after a listing
    # was saved: the message gives the saved listing's date.
    with FakeHub() as live:
        live.add_collection(
            "darkmaniac7/tokforge-mobile-draft-models-69c36153ea7084ce78329665",
            "TokForge Mobile Draft Models",
            ["someone/fresh-draft-MNN"],
        )
        monkeypatch.setenv("HF_ENDPOINT", live.endpoint)
        page.refresh_button.click()
        qtbot.waitUntil(lambda: "old" in page.age_label.text(), timeout=20_000)
    monkeypatch.setenv("HF_ENDPOINT", "http://nohost.invalid")
    page.refresh_button.click()
    qtbot.waitUntil(lambda: "No connection" in page.age_label.text(), timeout=20_000)
    text = page.age_label.text()
    assert text.startswith("No connection to nohost.invalid (the Hub endpoint set): ")
    assert f"showing the catalog saved on {date.today().day} " in text
    assert "Errno" not in text
    # Listing a repo's files fails the same way, and Download says why it cannot work.
    page.select_repo(REPO)
    qtbot.waitUntil(lambda: "Cannot list the files" in page.details.toPlainText(), timeout=20_000)
    details = page.details.toPlainText()
    assert "no connection to nohost.invalid" in details and "Errno" not in details
    assert not page.download_button.isEnabled()
    assert page.download_button.toolTip().startswith("Cannot download: ")


def test_download_is_offered_only_once_the_files_are_listed(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = window.downloads_page
    assert not page.download_button.isEnabled()
    assert page.download_button.toolTip() == "Select a repository in the list first"
    page.select_repo(REPO)
    qtbot.waitUntil(lambda: "llm.mnn.weight" in shown_files(page.files_model), timeout=10_000)
    assert page.download_button.isEnabled()


def test_queue_buttons_follow_the_selected_download(
    window: MainWindow, qtbot: QtBot, hub: FakeHub
) -> None:
    page = window.downloads_page
    buttons = (page.pause_button, page.retry_button, page.cancel_button, page.clear_button)
    assert not any(b.isEnabled() for b in buttons)
    assert page.pause_button.toolTip() == "Select a download in the queue first"
    hub.throttle_bytes_per_s = 50_000
    page.start_download(REPO)
    qtbot.waitUntil(lambda: page.queue_model.status(0).done_bytes > 0, timeout=10_000)
    assert page.pause_button.isEnabled()  # the started download was selected for the user
    page.queue_view.clearSelection()
    assert not page.pause_button.isEnabled()  # nothing selected
    page.queue_view.selectRow(0)
    assert page.pause_button.isEnabled() and page.cancel_button.isEnabled()
    assert not page.retry_button.isEnabled() and not page.clear_button.isEnabled()
    page.pause_button.click()
    _wait_state(qtbot, window, "paused")
    qtbot.waitUntil(page.retry_button.isEnabled, timeout=10_000)
    assert not page.pause_button.isEnabled() and page.cancel_button.isEnabled()
    assert not page.clear_button.isEnabled()  # paused is not finished: Discard ends it
    assert page.cancel_button.text() == "Discard"
    page.cancel_button.click()
    qtbot.waitUntil(
        lambda: not any(p.name.startswith(".download-") for p in window.library.root.iterdir()),
        timeout=30_000,
    )
    page.clear_button.click()
    qtbot.waitUntil(lambda: page.queue_model.rowCount() == 0, timeout=10_000)
    assert not any(b.isEnabled() for b in buttons)


def test_the_graph_dump_is_listed_as_skipped_and_fetched_when_asked(
    window: MainWindow, qtbot: QtBot, hub: FakeHub, fixture_bundle: Fixture
) -> None:
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    hub.add_repo("someone/with-graph-dump-MNN", {**files, "llm.mnn.json": b"{}"})
    page = window.downloads_page
    assert page.include_all.text() == "Also fetch export files (ONNX, llm.mnn.json)"
    page.add_edit.setText("someone/with-graph-dump-MNN")
    page.add_button.click()
    qtbot.waitUntil(lambda: "llm.mnn.weight" in shown_files(page.files_model), timeout=10_000)
    assert "Skipped (not fetched; the list says why): llm.mnn.json" in page.details.toPlainText()
    assert plan_rows(page.files_model)[-1][::3] == (
        "llm.mnn.json",
        "skipped: an export file no runtime reads",
    )
    # Asking for every file lists the dump again before anything is downloaded.
    page.include_all.setChecked(True)
    qtbot.waitUntil(
        lambda: "Skipped (not fetched; the list says why): none" in page.details.toPlainText()
    )
    page.download_button.click()
    _wait_state(qtbot, window, DONE)
    assert (window.library.root / "with-graph-dump-MNN" / "llm.mnn.json").read_bytes() == b"{}"


def test_a_download_that_duplicates_an_installed_pack_says_so(
    window: MainWindow, qtbot: QtBot, bundle_copy: Callable[..., Path], tmp_path: Path
) -> None:
    # The draft the Hub serves, already linked under a name of the user's.
    copy = bundle_copy("qwen3-draft-noisy", tmp_path / "mine" / "my-copy")
    window.library.add_folder(copy)
    page = window.downloads_page
    said: list[str] = []
    page.message.connect(said.append)
    page.start_download(REPO)
    _wait_state(qtbot, window, DONE)
    qtbot.waitUntil(lambda: any(s.startswith("Installed ") for s in said), timeout=10_000)
    installed = next(s for s in said if s.startswith("Installed "))
    assert f"it holds the same model files as “my-copy” ({copy}), already installed" in installed
