"""The Pair page offscreen: choosing a pair, the verdict card, the matrix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QStyledItemDelegate, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from app.core.infra.settings import load_settings
from app.core.measure import ram_estimate
from app.core.pack.pairing import drafts_for, rank_note
from app.ui.pair.pair_matrix import PairMatrixModel
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> MainWindow:
    win = create_main_window()
    root = win.library.root
    for name in ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target", "fast-draft"):
        bundle_copy(name, root / name)
    qtbot.addWidget(win)
    win.show()
    win.show_page("pair")
    # The page reads the library and judges its pairs on a worker thread: a loaded
    # machine can take seconds (the matrix test once read an empty model).
    page = win.pair_page
    qtbot.waitUntil(lambda: not page.loading() and page.matrix_model.rowCount() > 0, timeout=60_000)
    return win


def test_blocked_pair_card_says_why(window: MainWindow) -> None:
    page = window.pair_page
    root = window.library.root
    page.choose(root / "qwen3-target", root / "qwen35-draft")
    assert page.card.title.text().startswith("✕  Blocked")
    body = page.card.body.text()
    assert "different vocabularies" in body
    assert "target: 1,280 tokens" in body and "draft: 1,536 tokens" in body
    assert "linear attention" in body
    assert "None" not in body and "line up" not in body


def test_compatible_pair_and_selection_persists(window: MainWindow) -> None:
    page = window.pair_page
    root = window.library.root
    page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    changes: list[bool] = []
    window.selection.changed.connect(lambda: changes.append(True))
    page.choose(root / "fast-target", root / "fast-draft")
    assert page.card.title.text() == "✓  Compatible"
    assert changes
    assert window.selection.target == root / "fast-target"
    saved = load_settings()
    assert (saved.pair_target, saved.pair_draft) == (
        str(root / "fast-target"),
        str(root / "fast-draft"),
    )


def test_saved_pair_is_restored(window: MainWindow, qtbot: QtBot) -> None:
    root = window.library.root
    window.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    window.close()
    again = create_main_window()
    qtbot.addWidget(again)
    again.show_page("pair")
    again.show()
    qtbot.waitUntil(lambda: not again.pair_page.loading())  # read on a worker thread
    target, draft = again.pair_page.current()
    assert target is not None and draft is not None
    assert (target.name, draft.name) == ("qwen3-target", "qwen3-draft-noisy")
    assert "warning" in again.pair_page.card.title.text().lower()


def test_warning_card_shows_pack_advice(window: MainWindow) -> None:
    page = window.pair_page
    root = window.library.root
    page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    assert "Compatible, with warnings" in page.card.title.text()
    body = page.card.body.text()
    assert "A draft step costs about 1.00 target steps" in body  # one model, twice
    assert "Draft length 3" in body


def test_matrix_cells_and_double_click(
    window: MainWindow, qtbot: QtBot, qtmodeltester: object
) -> None:
    page = window.pair_page
    model = page.matrix_model
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    targets = [e.name for e in model.targets]
    drafts = [e.name for e in model.drafts]
    assert "qwen35-draft" in drafts and "fast-target" in targets
    row, column = targets.index("qwen3-target"), drafts.index("qwen35-draft")
    index = model.index(row, column)
    assert index.data() == "✕ blocked"
    assert "different vocabularies" in index.data(3)  # ToolTipRole
    ok = model.index(targets.index("fast-target"), drafts.index("fast-draft"))
    assert ok.data() == "✓ ok"
    page._on_matrix_double_clicked(ok)
    current = page.current()
    assert [e.name for e in current if e] == ["fast-target", "fast-draft"]


def test_swap(window: MainWindow) -> None:
    page = window.pair_page
    root = window.library.root
    page.choose(root / "qwen3-target", root / "fast-target")
    page.swap()
    target, draft = page.current()
    assert target is not None and draft is not None
    assert (target.name, draft.name) == ("fast-target", "qwen3-target")


def test_empty_library_explains(qtbot: QtBot) -> None:
    win = create_main_window()
    qtbot.addWidget(win)
    win.show()
    win.show_page("pair")
    qtbot.waitUntil(lambda: not win.pair_page.loading())  # read on a worker thread
    assert "Library page" in win.pair_page.card.body.text()
    assert isinstance(win.pair_page.matrix_model, PairMatrixModel)
    assert win.pair_page.matrix_model.rowCount() == 0


def test_memory_estimate_beside_the_verdict(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = window.pair_page
    root = window.library.root
    page.choose(root / "fast-target", root / "fast-draft")
    label = page.memory_label
    assert label.isVisible()
    text = label.text()
    assert text.startswith("On this computer: this pair needs about ")
    assert "weights" in text and "KV cache" in text and "of memory is available" in text
    assert label.property("level") == "fits"
    assert text.endswith("Context window: 2,048 tokens (the recipe's max_all_tokens).")

    monkeypatch.setattr(ram_estimate, "available_memory", lambda: 20_000_000)
    page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    assert label.text().startswith("✕ On this computer, not enough memory: this pair needs ")
    assert "19.1 MB of memory is available" in label.text()
    assert label.property("level") == "too_big"


def _dialogs() -> list[str]:
    return [
        w.text()
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.isVisible()
    ]


def _items(combo: object) -> list[str]:
    from PySide6.QtWidgets import QComboBox

    assert isinstance(combo, QComboBox)
    return [combo.itemText(i) for i in range(combo.count()) if combo.itemData(i) is not None]


@pytest.fixture
def messy(qtbot: QtBot, bundle_copy: Copy, tmp_path: Path) -> MainWindow:
    """A fresh library whose first packs by name are a Qwen3.5 target (blocked with the
    Qwen3 drafts) and broken packs; a same-named pack added from another folder."""
    win = create_main_window()
    root = win.library.root
    qwen35 = bundle_copy("qwen35-draft", root / "a-qwen35-target")
    (qwen35 / "config_cpu.json").unlink()  # no draft recipe: listed as a target
    for name in ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target", "fast-draft"):
        bundle_copy(name, root / name)
    bad_json = bundle_copy("qwen3-draft-noisy", root / "a-bad-recipe")
    (bad_json / "config_cpu.json").write_text("{oops")
    truncated = bundle_copy("qwen3-target", root / "a-truncated")
    weight = truncated / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[:1000])
    win.library.add_folder(bundle_copy("fast-draft", tmp_path / "elsewhere" / "fast-draft"))
    qtbot.addWidget(win)
    win.show()
    win.show_page("pair")
    qtbot.waitUntil(lambda: not win.pair_page.loading())  # read on a worker thread
    return win


def test_first_pair_is_the_best_that_can_run(messy: MainWindow) -> None:
    page = messy.pair_page
    target, draft = page.current()
    assert target is not None and draft is not None
    assert target.ok and draft.ok
    assert not page.matrix_model.verdict(target, draft).blocked
    # Compatible without warnings, then the smaller draft share (pairing.py).
    assert target.name == "fast-target"
    assert page.card.title.text() == "✓  Compatible"
    assert messy.selection.target == target.path and messy.selection.draft == draft.path
    assert _dialogs() == []


def test_draft_list_offers_fitting_drafts_then_all(messy: MainWindow, tmp_path: Path) -> None:
    page = messy.pair_page
    root = messy.library.root
    page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    assert not page.show_all.isChecked()
    fitting = _items(page.draft_combo)
    assert fitting[0] == "qwen3-draft-noisy"
    assert set(fitting) == {
        "qwen3-draft-noisy",
        "fast-draft (library)",
        f"fast-draft (linked: {tmp_path / 'elsewhere'})",
        "fast-target",
    }
    page.show_all.setChecked(True)
    items = _items(page.draft_combo)
    assert items[: len(fitting)] == fitting  # the others follow, marked
    assert "qwen35-draft (✕ blocked with this target)" in items
    assert "a-bad-recipe (cannot be read)" in items
    chosen = page.current()[1]
    assert chosen is not None and chosen.name == "qwen3-draft-noisy"
    page.show_all.setChecked(False)
    # The Qwen3.5 target: only the Qwen3.5 draft is offered in place of the Qwen3 one.
    page.target_combo.setCurrentIndex(page.target_combo.findText("a-qwen35-target"))
    target, draft = page.current()
    assert target is not None and target.name == "a-qwen35-target"
    assert draft is not None and draft.name == "qwen35-draft"  # cannot pay, but can run
    page.target_combo.setCurrentIndex(page.target_combo.findText("fast-target"))
    assert page.current()[1] is not None  # back to a fitting draft
    # A target no draft can serve (it cannot be read): none is offered; the card says why.
    page.target_combo.setCurrentIndex(page.target_combo.findText("a-truncated (cannot be read)"))
    assert page.current()[1] is None
    assert page.card.title.text() == "The target a-truncated cannot be read"
    assert str(root / "a-truncated") in page.card.body.text()
    assert _dialogs() == []


def test_show_all_ticked_by_the_page_is_said(messy: MainWindow) -> None:
    """A blocked pair chosen (the matrix's double-click, the Library's Use as Draft) ticks
    "Show all drafts" to list its draft: a note says so, until the user ticks it."""
    page = messy.pair_page
    root = messy.library.root
    assert not page.show_all.isChecked() and not page.show_all_note.isVisible()
    page.choose(root / "qwen3-target", root / "a-bad-recipe")
    assert page.show_all.isChecked() and page.show_all_note.isVisible()
    assert "“Show all drafts” is now ticked: a-bad-recipe" in page.show_all_note.text()
    page.show_all.setChecked(False)
    assert not page.show_all_note.isVisible()


def test_broken_recipe_is_inline_never_a_modal(messy: MainWindow) -> None:
    page = messy.pair_page
    root = messy.library.root
    page.choose(root / "qwen3-target", root / "a-bad-recipe")
    assert page.show_all.isChecked()  # the chosen draft does not suit: all are listed
    assert page.card.title.text().startswith("✕  Blocked")
    body = page.card.body.text()
    assert "invalid JSON" in body and str(root / "a-bad-recipe" / "config_cpu.json") in body
    assert "draft: " + str(root / "a-bad-recipe" / "config_cpu.json") in body
    assert "target: read fine" in body and "None" not in body
    for name in ("fast-target", "a-qwen35-target", "qwen3-target"):
        page.target_combo.setCurrentIndex(page.target_combo.findText(name))
    assert _dialogs() == []
    # The Recipes page, when opened, is where the file is named in a dialog.
    page.choose(root / "qwen3-target", root / "a-bad-recipe")
    messy.show_page("recipes")
    assert any("invalid JSON" in text for text in _dialogs())


def test_same_named_packs_are_told_apart(messy: MainWindow, tmp_path: Path) -> None:
    page = messy.pair_page
    page.show_all.setChecked(True)
    drafts = _items(page.draft_combo)
    # The rule of every list (pack_names.py): where each lives.
    linked = f"fast-draft (linked: {tmp_path / 'elsewhere'})"
    assert "fast-draft (library)" in drafts and linked in drafts
    assert "fast-draft" not in drafts
    model = page.matrix_model
    headers = [model.headerData(i, Qt.Orientation.Horizontal) for i in range(model.columnCount())]
    assert {"fast-draft (library)", linked} <= set(headers)
    assert "qwen3-draft-noisy" in headers  # a unique name stays as it is
    column = headers.index(linked)
    tooltip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert tooltip == str(tmp_path / "elsewhere" / "fast-draft")


# Offscreen, a popup can neither grab the keyboard nor be raised: said, not failed.
@pytest.mark.qt_log_ignore("does not support grabbing the keyboard", r"does not support raise\(\)")
def test_the_draft_list_shows_its_order(messy: MainWindow) -> None:
    """Best first, and each draft says why it stands there, in the open list; the closed
    box keeps the bare name (the reason would be cut at 1024 px)."""
    page = messy.pair_page
    root = messy.library.root
    page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    combo = page.draft_combo
    target, _ = page.current()
    assert target is not None
    fitting = drafts_for(target, page._drafts, page.matrix_model.verdict)[0]
    listed = [combo.itemData(i) for i in range(combo.count())]
    assert [e.path for e in listed] == [e.path for e in fitting]
    delegate = combo.itemDelegate()
    assert isinstance(delegate, QStyledItemDelegate)
    for row, entry in enumerate(fitting):
        note = rank_note(target, entry, page.matrix_model.verdict(target, entry))
        option = QStyleOptionViewItem()
        delegate.initStyleOption(option, combo.model().index(row, 0))
        assert option.text == f"{page.matrix_model.label(entry)}  ·  {note}"
        assert "% of the target's size" in note
    assert combo.currentText() == "qwen3-draft-noisy"
    assert "Best first" in combo.toolTip()
    # The open list is wide enough for its longest line (measured as it opens).
    view = combo.view()
    combo.showPopup()
    assert view.minimumWidth() >= view.sizeHintForColumn(0) > 0
    combo.hidePopup()
