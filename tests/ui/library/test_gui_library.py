"""The first window, offscreen with real widgets: library table, details, add, remove."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.infra.settings import load_settings
from app.ui.library.library_model import COLUMNS, LibraryModel
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    win = create_main_window()
    qtbot.addWidget(win)
    win.show()
    return win


def _open_box(name: str) -> QMessageBox:
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()
    ]
    assert len(boxes) == 1, f"expected one {name}, found {len(boxes)}"
    return boxes[0]


def _cell(win: MainWindow, row: int, column: str) -> str:
    proxy = win.library_page.proxy
    return str(proxy.index(row, COLUMNS.index(column)).data())


def test_library_model_passes_qt_model_tester(
    qtmodeltester: object, bundle_copy: Copy, tmp_path: Path
) -> None:
    from app.core.pack.library import read_entry

    model = LibraryModel()
    good = read_entry(bundle_copy("qwen3-target"), by_reference=False)
    broken_path = bundle_copy("qwen35-draft")
    (broken_path / "llm.mnn.weight").write_bytes(b"")
    broken = read_entry(broken_path, by_reference=True)
    model.set_entries([good])
    model.add_entries([broken])
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    model.remove_entry(good)
    assert model.rowCount() == 1


def test_window_lists_installed_packs(window: MainWindow, bundle_copy: Copy, qtbot: QtBot) -> None:
    root = window.library.root
    bundle_copy("qwen3-target", root / "qwen3-target")
    bundle_copy("qwen35-draft", root / "qwen35-draft")
    window.library_page.refresh()
    assert window.library_page.proxy.rowCount() == 2
    assert _cell(window, 0, "Name") == "qwen3-target"
    assert _cell(window, 0, "Family") == "qwen3"
    assert _cell(window, 1, "Family") == "qwen3_5"
    assert _cell(window, 1, "Attention") == "mix (linear)"
    assert _cell(window, 1, "Role") == "draft"
    assert _cell(window, 0, "Status") == "OK"
    assert "2 packs" in window.statusBar().currentMessage()
    # The sidebar shows only pages that exist.
    assert [window.sidebar.item(i).text() for i in range(window.sidebar.count())] == [
        "Library",
        "Downloads",
        "Pair",
        "Recipes",
        "Chat",
        "Tune",
        "Phone",
    ]


def test_selecting_a_pack_shows_its_details(window: MainWindow, bundle_copy: Copy) -> None:
    bundle_copy("qwen3-draft-noisy", window.library.root / "noisy")
    window.library_page.refresh()
    window.library_page.table.selectRow(0)
    text = window.library_page.details.toPlainText()
    assert "noisy" in text
    assert "runtime_config.json" in text
    assert "Tokenizer sha256" in text
    assert window.library_page.act_remove.isEnabled()


def test_broken_pack_shows_the_problem(window: MainWindow, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target", window.library.root / "bad")
    (pack / "config.json").write_text("{oops")
    window.library_page.refresh()
    assert _cell(window, 0, "Status").startswith(
        "Error: config.json: invalid JSON: line 1, column 2"
    )
    window.library_page.table.selectRow(0)
    text = window.library_page.details.toPlainText()
    assert "cannot be used" in text and str(pack / "config.json") in text


def test_truncated_weight_says_so_in_the_status(window: MainWindow, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target", window.library.root / "cut")
    weight = pack / "llm.mnn.weight"
    with weight.open("r+b") as handle:
        handle.truncate(weight.stat().st_size // 2)
    window.library_page.refresh()
    status = _cell(window, 0, "Status")
    assert status.startswith("Error: llm.mnn.weight is shorter than the model needs (")
    assert status.endswith("download or copy the pack again")
    index = window.library_page.proxy.index(0, COLUMNS.index("Status"))
    assert str(weight) in str(index.data(Qt.ItemDataRole.ToolTipRole))


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)])
def test_names_get_the_room_and_path_gives_way(
    window: MainWindow, bundle_copy: Copy, qtbot: QtBot, size: tuple[int, int]
) -> None:
    root = window.library.root / ("a-library-folder-with-a-rather-long-name" * 2)
    window.library_page.library.set_root(root)
    long_name = "Qwen3-4B-Instruct-2507-MNN-int4-target-for-speculative-decoding"
    bundle_copy("qwen3-target", root / long_name)
    bundle_copy("qwen3-draft-noisy", root / "short")
    window.resize(*size)
    window.library_page.refresh()
    table = window.library_page.table
    path_col = COLUMNS.index("Path")
    # Wait on the layout having given the table its width.
    qtbot.waitUntil(lambda: table.viewport().width() > size[0] // 2)
    table.fit_columns()
    assert table.columnWidth(0) >= table.sizeHintForColumn(0)  # names in full
    assert table.columnWidth(path_col) < table.sizeHintForColumn(path_col)  # elided
    if size[0] >= 1600:
        assert table.horizontalScrollBar().maximum() == 0
    row = next(r for r in range(2) if _cell(window, r, "Name") == long_name)
    tip = window.library_page.proxy.index(row, path_col).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == str(root / long_name)


def test_add_folder_and_zip_by_drop(
    window: MainWindow,
    qtbot: QtBot,
    bundle_copy: Copy,
    tmp_path: Path,
    fixture_bundle: Callable[[str], Path],
) -> None:
    folder = bundle_copy("qwen3-draft-identical")
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for file in fixture_bundle("qwen3-draft-independent").iterdir():
            zf.write(file, f"independent/{file.name}")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder)), QUrl.fromLocalFile(str(archive))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: not window.library_page.importing())
    names = sorted(_cell(window, r, "Name") for r in range(window.library_page.proxy.rowCount()))
    assert names == ["independent", "qwen3-draft-identical"]
    assert (window.library.root / "independent" / "llm.mnn").is_file()
    assert load_settings().references == [str(folder.resolve())]


def test_hostile_zip_shows_an_error_and_adds_nothing(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../../evil.txt", "x")
    window.library_page.add_paths([archive])
    qtbot.waitUntil(lambda: not window.library_page.importing())
    box = _open_box("errorDialog")
    assert "outside the pack" in box.text()
    box.close()
    assert window.library_page.proxy.rowCount() == 0


def _big_zip(folder: Path, archive: Path) -> Path:
    """A pack zip that takes a moment to unpack (stored, so it is not a bomb)."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        for file in folder.iterdir():
            zf.write(file, f"big/{file.name}")
        with zf.open("big/padding.bin", "w") as out:
            for _ in range(60):
                out.write(bytes(1 << 20))
    return archive


def test_zip_imports_in_the_background_with_progress(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, fixture_bundle: Callable[[str], Path]
) -> None:
    page = window.library_page
    archive = _big_zip(fixture_bundle("qwen3-target"), tmp_path / "big.zip")
    page.add_paths([archive])  # returns at once: the window keeps handling events
    assert page.importing() and page.import_row.isVisible()
    qtbot.waitUntil(lambda: not page.importing(), timeout=30_000)
    assert page.import_bar.value() == 1000 and page.import_row.isHidden()
    assert [_cell(window, 0, "Name")] == ["big"]


def test_zip_import_can_be_cancelled(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, fixture_bundle: Callable[[str], Path]
) -> None:
    page = window.library_page
    archive = _big_zip(fixture_bundle("qwen3-target"), tmp_path / "big.zip")
    messages: list[str] = []
    page.message.connect(messages.append)
    page.add_paths([archive])
    page.import_cancel.click()
    qtbot.waitUntil(lambda: not page.importing(), timeout=30_000)
    assert messages[-1] == "Import of big.zip cancelled"
    assert page.proxy.rowCount() == 0
    assert not any(window.library.root.iterdir())  # nothing half-unpacked left


def test_remove_asks_first_and_cancel_keeps_the_pack(window: MainWindow, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target", window.library.root / "qwen3-target")
    window.library_page.refresh()
    window.library_page.table.selectRow(0)
    window.library_page.act_remove.trigger()
    box = _open_box("confirmDialog")
    assert "deletes the folder" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert pack.is_dir()
    assert window.library_page.proxy.rowCount() == 1

    window.library_page.act_remove.trigger()
    box = _open_box("confirmDialog")
    delete = next(b for b in box.buttons() if b.text() == "Delete")
    delete.click()
    assert not pack.exists()
    assert window.library_page.proxy.rowCount() == 0


def test_filter_narrows_the_table(window: MainWindow, bundle_copy: Copy) -> None:
    bundle_copy("qwen3-target", window.library.root / "qwen3-target")
    bundle_copy("qwen35-draft", window.library.root / "qwen35-draft")
    window.library_page.refresh()
    window.library_page.filter_edit.setText("qwen3_5")
    assert window.library_page.proxy.rowCount() == 1
    assert _cell(window, 0, "Name") == "qwen35-draft"


def test_window_geometry_persists(qtbot: QtBot) -> None:
    first = create_main_window()
    qtbot.addWidget(first)
    first.resize(1000, 650)  # within the 1024x700 the window must fit
    first.show()
    first.close()
    saved = load_settings()
    assert saved.window_geometry
    second = create_main_window()
    qtbot.addWidget(second)
    # Qt keeps a restored window on its screen: the offscreen one is 800 px wide.
    room = second.screen().availableGeometry().width()
    assert second.height() == 650
    assert min(1000, room) - 4 <= second.width() <= 1000


def test_unexpected_error_shows_a_dialog_and_the_app_lives(qtbot: QtBot) -> None:
    from app.ui.shell.crash_guard import CrashGuard

    guard = CrashGuard()
    try:
        raise RuntimeError("boom in a slot")
    except RuntimeError as exc:
        guard._hook(type(exc), exc, exc.__traceback__)
    qtbot.waitUntil(
        lambda: any(
            isinstance(w, QMessageBox) and w.objectName() == "errorDialog" and w.isVisible()
            for w in QApplication.topLevelWidgets()
        )
    )
    box = _open_box("errorDialog")
    assert "boom in a slot" in box.text()
    assert "RuntimeError" in box.detailedText()
    box.close()


def test_error_in_a_worker_thread_reaches_the_gui(qtbot: QtBot) -> None:
    import threading

    from app.ui.shell.crash_guard import CrashGuard

    guard = CrashGuard()
    guard.install()
    try:

        def work() -> None:
            raise ValueError("failed in the background")

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        qtbot.waitUntil(
            lambda: any(
                isinstance(w, QMessageBox) and w.objectName() == "errorDialog" and w.isVisible()
                for w in QApplication.topLevelWidgets()
            )
        )
    finally:
        guard.uninstall()
    box = _open_box("errorDialog")
    assert "failed in the background" in box.text()
    box.close()


def test_empty_library_explains_what_to_do(window: MainWindow) -> None:
    text = window.library_page.details.toPlainText()
    assert "No packs yet" in text and str(window.library.root) in text


def test_library_folder_can_be_changed(
    window: MainWindow, bundle_copy: Copy, tmp_path: Path, qtbot: QtBot
) -> None:
    elsewhere = tmp_path / "elsewhere"
    bundle_copy("qwen3-target", elsewhere / "moved-here")
    window.library_page.set_library_folder(elsewhere)
    qtbot.waitUntil(lambda: not window.library_page.loading())  # read on a worker thread
    assert _cell(window, 0, "Name") == "moved-here"
    assert load_settings().library_dir == str(elsewhere.resolve())
