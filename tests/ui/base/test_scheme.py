"""The colour scheme: DraftDeck follows the system's light or dark scheme, live, and
keeps every text colour readable (WCAG AA, contrast >= 4.5) in both."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.ui.base.colours import DARK, LIGHT
from app.ui.base.scheme import Scheme, colours, scheme
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow
from tests.helpers.contrast import AA, contrast

Role = QPalette.ColorRole
SCHEMES = (Qt.ColorScheme.Light, Qt.ColorScheme.Dark)


@pytest.fixture
def followed(qapp: QApplication) -> Iterator[Scheme]:
    """The scheme as run_gui sets it up; the application as the other tests know it after."""
    followed = scheme()
    followed.follow_system()
    yield followed
    qapp.styleHints().unsetColorScheme()
    followed.apply(Qt.ColorScheme.Light)
    qapp.setStyleSheet("")
    qapp.setPalette(QPalette())


@pytest.fixture
def window(qtbot: QtBot, followed: Scheme) -> MainWindow:
    win = create_main_window()
    qtbot.addWidget(win)
    win.show()
    return win


def test_a_dark_request_gives_a_dark_palette_and_style_sheet(
    qapp: QApplication, followed: Scheme
) -> None:
    # QStyleHints.setColorScheme is asked first; offscreen cannot switch, so DraftDeck
    # draws the dark scheme itself.
    followed.request(Qt.ColorScheme.Dark)
    palette = qapp.palette()
    assert colours() is DARK
    assert palette.color(Role.Window).lightness() < palette.color(Role.WindowText).lightness()
    assert DARK.details in qapp.styleSheet() and LIGHT.details not in qapp.styleSheet()
    followed.request(Qt.ColorScheme.Light)
    assert colours() is LIGHT
    assert qapp.palette().color(Role.Window) == QPalette().color(Role.Window)  # the platform's
    assert LIGHT.details in qapp.styleSheet()


def test_a_system_change_recolours_the_open_window(qapp: QApplication, window: MainWindow) -> None:
    """The desktop switching to dark while the app runs: charts, the transcript's draft
    highlight and the style sheet (the Library's details pane) are drawn anew in the dark
    colours, and back."""
    chat = window.chat_page
    chat.transcript.start_assistant("speculative")
    chat.transcript.add_pieces([" drafted", " own"], [1, 0])
    assert QColor(LIGHT.draft).name() in chat.transcript.toHtml()
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # as the platform does
    assert colours() is DARK
    assert QColor(DARK.draft).name() in chat.transcript.toHtml()
    assert QColor(LIGHT.draft).name() not in chat.transcript.toHtml()
    plot = chat.charts.speed_plot
    assert plot.backgroundBrush().color() == QColor(DARK.chart)
    assert plot.getAxis("left").textPen().color() == QColor(DARK.chart_text)
    assert f"background: {DARK.details}" in qapp.styleSheet()  # the Library's details pane
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert plot.backgroundBrush().color() == QColor(LIGHT.chart)
    assert QColor(LIGHT.draft).name() in chat.transcript.toHtml()


def _pairs(palette: QPalette) -> list[tuple[str, QColor | str, QColor | str]]:
    """Every (what, text colour, background) pair the style sheet and pages draw."""
    now = colours()
    window, base = palette.color(Role.Window), palette.color(Role.Base)
    text, window_text = palette.color(Role.Text), palette.color(Role.WindowText)
    grounds: dict[str, QColor | str] = {"window": window, "base": base, "details": now.details}
    pairs: list[tuple[str, QColor | str, QColor | str]] = [
        ("text on window", window_text, window),
        ("text on base", text, base),
        ("text on the details pane", text, now.details),
        ("link on base", palette.color(Role.Link), base),
        ("palette selection", palette.color(Role.HighlightedText), palette.color(Role.Highlight)),
        ("table selection", now.selection_text, now.selection),
        ("sidebar", now.sidebar_text, now.sidebar),
        ("sidebar selection", now.sidebar_selected_text, now.sidebar_selected),
        ("chart labels", now.chart_text, now.chart),
        ("chart reference key", now.error, now.chart),
        ("tune chart key", now.hint, now.chart),
        ("draft highlight", text, now.draft),
        ("greyed draft highlight", now.faint, now.draft),
        ("best Tune row", text, now.best_row),
    ]
    for role in ("hint", "faint", "error", "caution", "good", "accent"):
        pairs += [(f"{role} on {name}", now.of(role), ground) for name, ground in grounds.items()]
    for level in ("compatible", "warnings", "cannot_pay", "blocked"):
        background, ink = getattr(now, level)
        pairs += [
            (f"{level} verdict title", ink, background),
            (f"{level} verdict words", window_text, background),
            (f"{level} verdict evidence", now.hint, background),
        ]
    return pairs


@pytest.mark.parametrize("wanted", SCHEMES, ids=lambda s: s.name)
def test_every_text_colour_reads_at_wcag_aa(
    qapp: QApplication, followed: Scheme, wanted: Qt.ColorScheme
) -> None:
    followed.request(wanted)
    low = [
        f"{what}: {contrast(ink, ground):.2f} ({QColor(ink).name()} on {QColor(ground).name()})"
        for what, ink, ground in _pairs(qapp.palette())
        if contrast(ink, ground) < AA
    ]
    assert not low, "\n".join(low)


def _first_block(window: MainWindow) -> QImage:
    """The Library details pane's first paragraph ("No packs yet"), as drawn."""
    details = window.library_page.details
    block = details.document().firstBlock()
    assert block.text() == "No packs yet"
    rect = details.document().documentLayout().blockBoundingRect(block).toRect()
    rect.translate(QPoint(-details.horizontalScrollBar().value(), 0))
    return details.viewport().grab(rect).toImage()


def test_no_packs_yet_reads_in_the_dark(qtbot: QtBot, followed: Scheme, window: MainWindow) -> None:
    """The user's report: dark desktop, the empty Library's "No packs yet" at 1.4."""
    followed.request(Qt.ColorScheme.Dark)
    window.show_page("library")
    qtbot.waitUntil(
        lambda: window.library_page.details.document().firstBlock().text() == "No packs yet"
    )
    image = _first_block(window)
    pixels = Counter(
        image.pixelColor(x, y).rgb() for x in range(image.width()) for y in range(image.height())
    )
    background = QColor.fromRgb(pixels.most_common(1)[0][0])
    # The glyphs' cores: the pixels that stand out most (edges are blended).
    ink = max((QColor.fromRgb(p) for p in pixels), key=lambda c: contrast(c, background))
    assert background.lightness() < 100, f"the pane is not dark: {background.name()}"
    assert contrast(ink, background) >= AA, (ink.name(), background.name())
