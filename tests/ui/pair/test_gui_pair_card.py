"""The Pair page's verdict card offscreen: as tall as its words, scrolling inside when
the page is short, and worded as a user reads it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.measure.bench import RunPair, summarize
from app.core.measure.metrics import DecodeStats
from app.core.measure.pair_cost import BY_TUNE, record_cost
from app.core.measure.words import Mode
from app.ui.pair.pair_page import PairPage
from app.ui.pair.verdict_card import VerdictCard
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, half_copied, open_window

Copy = Callable[..., Path]
BROKEN = "half-copied-pack"


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        names = ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target")
        half_copied(bundle_copy, add_packs(win, bundle_copy, names) / BROKEN)
        win.show_page("pair")
        yield win


def _laid_out(window: MainWindow, qtbot: QtBot, size: tuple[int, int]) -> VerdictCard:
    """The card once the layout has given it the height it settles on."""
    window.resize(*size)
    card = window.pair_page.card
    qtbot.waitUntil(lambda: card.width() > size[0] // 2)
    qtbot.waitUntil(lambda: card.height() == card.needed_height())
    return card


def test_blocked_card_shows_every_reason_at_1024x700(window: MainWindow, qtbot: QtBot) -> None:
    root = window.library.root
    window.pair_page.choose(root / "qwen3-target", root / "qwen35-draft")
    card = _laid_out(window, qtbot, (1024, 700))
    body = card.body.text()
    # The last reason's evidence (the id lists of one vocabulary no longer block).
    assert "Qwen3 and Qwen3.5" in body and "draft: linear attention" in body
    # All of it in view: the card is as tall as its words, nothing to scroll.
    assert card.frame.height() == card.height()
    assert card.verticalScrollBar().maximum() == 0
    assert window.pair_page.matrix.height() > 100  # the matrix keeps room too


def test_compatible_card_is_no_taller_than_its_words(window: MainWindow, qtbot: QtBot) -> None:
    root = window.library.root
    window.pair_page.choose(root / "fast-target", root / "qwen3-draft-noisy")
    card = _laid_out(window, qtbot, (1600, 1000))
    assert card.title.text() == "✓  Compatible"
    assert card.height() == card.needed_height()
    assert card.frame.height() == card.needed_height()  # the coloured box: words only
    # The matrix takes the rest of the page.
    assert window.pair_page.matrix.height() > 2 * card.height()


def test_card_refits_to_new_words_and_widths(window: MainWindow, qtbot: QtBot) -> None:
    root = window.library.root
    page = window.pair_page
    card = page.card

    def box_fills_card() -> bool:
        return card.frame.height() == card.height()

    steps = [
        ((1600, 1000), ("fast-target", "qwen3-draft-noisy")),
        ((1600, 1000), ("qwen3-target", "qwen35-draft")),  # more words, same width
        ((1024, 700), ("qwen3-target", "qwen35-draft")),  # narrower: taller
        ((1600, 1000), ("qwen3-target", "qwen35-draft")),  # wider again: shorter
        ((1600, 1000), ("fast-target", "qwen3-draft-noisy")),  # fewer words
    ]
    for size, (target, draft) in steps:
        page.choose(root / target, root / draft)
        _laid_out(window, qtbot, size)
        qtbot.waitUntil(box_fills_card)
        assert card.verticalScrollBar().maximum() == 0, (size, target, draft)
        assert card.title.height() == card.title.heightForWidth(card.title.width())


def test_card_scrolls_inside_when_short(window: MainWindow, qtbot: QtBot) -> None:
    # The page on its own: the window's other pages keep it taller than this.
    page = PairPage(window.library, window.selection)
    qtbot.addWidget(page)
    page.resize(800, 420)
    page.show()
    root = window.library.root
    page.choose(root / "qwen3-target", root / "qwen35-draft")
    card = page.card
    # Wait on the layout having settled: every word in the card, some out of view.
    qtbot.waitUntil(
        lambda: (
            card.verticalScrollBar().maximum() > 0
            and card.frame.height() >= card.frame.heightForWidth(card.viewport().width())
        )
    )
    assert 0 < card.height() < card.needed_height()
    # What is out of view is within reach of the scroll bar.
    assert card.verticalScrollBar().maximum() == card.frame.height() - card.viewport().height()
    assert page.matrix.height() > 40  # the matrix is not squeezed out


def test_pack_settings_read_as_the_recipe_names_them(window: MainWindow) -> None:
    root = window.library.root
    window.pair_page.choose(root / "fast-target", root / "qwen3-draft-noisy")
    body = window.pair_page.card.body.text()
    assert (
        "The pack recommends: Draft length 3, Draft threads 2, Draft backend CPU, "
        "Target backend OpenCL." in body
    )
    assert "draft_predict_length" not in body and "target_backend" not in body


@pytest.mark.parametrize("side", ["target", "draft"])
def test_broken_pack_card_names_the_file_once(window: MainWindow, side: str) -> None:
    root = window.library.root
    pair = (root / BROKEN, root / "qwen3-draft-noisy")
    window.pair_page.choose(*(pair if side == "target" else (root / "qwen3-target", pair[0])))
    body = window.pair_page.card.body.text()
    assert f"The {side} bundle cannot be read: llm.mnn.weight is shorter" in body
    assert "(llm.mnn.weight)" not in body
    assert body.count("llm.mnn.weight") == 2  # the sentence, and the path as evidence


def test_the_card_says_the_c_measured_here_once_the_pair_ran(
    window: MainWindow, qtbot: QtBot
) -> None:
    """Estimated from the weights' size until the pair runs here; then the c measured on
    this computer (a Tune sweep's, kept by record_cost) in its place, and the level
    follows it: one model twice costs as much as a target step by its bytes, but if it
    ran here at 0.45 of one, that is what the card says."""
    root = window.library.root
    target, draft = root / "qwen3-target", root / "qwen3-draft-noisy"
    page = window.pair_page
    page.choose(target, draft)
    body = page.card.body.text()
    assert "(c, estimated from the weights" in body and "258.3 KB read per token" in body
    assert page.card.title.text().startswith("⚠  Compatible, with warnings")
    plain = DecodeStats(Mode.PLAIN, 0, rounds=10, tokens=10, decode_seconds=0.1)
    plain.target_seconds, plain.target_forwards = 0.1, 10
    spec = DecodeStats(Mode.SPECULATIVE, 2, rounds=5, tokens=15, drafted=10, accepted=5)
    spec.target_seconds, spec.target_forwards = 0.05, 5
    spec.draft_seconds, spec.draft_forwards, spec.decode_seconds = 0.045, 10, 0.095
    record_cost(target, draft, summarize([RunPair(plain, spec, True)]), BY_TUNE)
    page.choose(root / "fast-target", draft)  # away and back: the card is judged again
    page.choose(target, draft)
    body = page.card.body.text()
    assert "A draft step costs about 0.45 of a target step (c, measured on this computer" in body
    assert "estimated from the weights" not in body
    assert page.card.title.text() == "✓  Compatible"
