"""The Pair page offscreen: choosing a pair, the verdict card, the matrix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.infra.settings import load_settings
from app.core.measure import ram_estimate
from app.ui.application import create_main_window
from app.ui.main_window import MainWindow
from app.ui.pair_matrix import PairMatrixModel

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
    return win


def test_blocked_pair_card_says_why(window: MainWindow) -> None:
    page = window.pair_page
    root = window.library.root
    page.choose(root / "qwen3-target", root / "qwen35-draft")
    assert page.card.title.text().startswith("✕  Blocked")
    body = page.card.body.text()
    assert "different vocabularies" in body and "target: 1280" in body and "draft: 1536" in body
    assert "linear attention" in body


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
    assert "not smaller than the target" in body
    assert "draft_predict_length 3" in body


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
    assert text.startswith("Memory: this pair needs about ")
    assert "weights" in text and "KV cache" in text and "of memory is available" in text
    assert label.property("level") == "fits"

    monkeypatch.setattr(ram_estimate, "available_memory", lambda: 20_000_000)
    page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    assert label.text().startswith("✕ Not enough memory: this pair needs about ")
    assert "19.1 MB of memory is available" in label.text()
    assert label.property("level") == "too_big"
