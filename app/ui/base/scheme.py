"""The colour scheme DraftDeck draws in: the system's, light or dark, followed while the
app runs. On a change the palette and the style sheet are set anew, then `changed` is
emitted for what paints its own colours (charts, the transcript, verdict cards)."""

from __future__ import annotations

from string import Template

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.core.infra.resources import read_text
from app.ui.base.colours import DARK, DARK_PALETTE, LIGHT, Colours, Palette

_Role = QPalette.ColorRole


def style_sheet(colours: Colours) -> str:
    """resources/style.qss with the scheme's colours in its ${name} places."""
    return Template(read_text("style.qss")).substitute(colours.style_values())


def dark_palette(palette: Palette = DARK_PALETTE) -> QPalette:
    # From the button and window colours Qt derives the bevel shades Fusion draws.
    made = QPalette(QColor(palette.button), QColor(palette.window))
    for role, colour in (
        (_Role.Window, palette.window),
        (_Role.WindowText, palette.window_text),
        (_Role.Base, palette.base),
        (_Role.AlternateBase, palette.alternate_base),
        (_Role.Text, palette.text),
        (_Role.Button, palette.button),
        (_Role.ButtonText, palette.window_text),
        (_Role.BrightText, palette.window_text),
        (_Role.Link, palette.link),
        (_Role.LinkVisited, palette.link),
        (_Role.ToolTipBase, palette.tooltip),
        (_Role.ToolTipText, palette.window_text),
        (_Role.PlaceholderText, DARK.hint),
    ):
        made.setColor(role, QColor(colour))
    for role in (_Role.WindowText, _Role.Text, _Role.ButtonText):
        made.setColor(QPalette.ColorGroup.Disabled, role, QColor(palette.disabled_text))
    return made


def _is_dark(palette: QPalette) -> bool:
    return palette.color(_Role.Window).lightness() < palette.color(_Role.WindowText).lightness()


class Scheme(QObject):
    """The application's scheme (one, made by `scheme()`)."""

    changed = Signal()

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.app = app
        self.colours = LIGHT
        app.styleHints().colorSchemeChanged.connect(self.apply)

    def apply(self, system: Qt.ColorScheme) -> None:
        """Draw in `system`'s colours; Unknown (no word from the platform) follows
        whether the platform's palette is dark."""
        self.app.setPalette(QPalette())  # the platform's own, as a new one may be
        dark = system == Qt.ColorScheme.Dark or (
            system == Qt.ColorScheme.Unknown and _is_dark(self.app.palette())
        )
        self.colours = DARK if dark else LIGHT
        # Fusion and offscreen keep a light palette whatever the desktop says.
        palette = (
            dark_palette() if dark and not _is_dark(self.app.palette()) else self.app.palette()
        )
        # The selection in the scheme's colours: Fusion's white on #308cc6 reads at 3.7.
        palette.setColor(_Role.Highlight, QColor(self.colours.selection))
        palette.setColor(_Role.HighlightedText, QColor(self.colours.selection_text))
        self.app.setPalette(palette)
        self.app.setStyleSheet(style_sheet(self.colours))
        self.changed.emit()

    def follow_system(self) -> None:
        self.apply(self.app.styleHints().colorScheme())

    def request(self, wanted: Qt.ColorScheme) -> None:
        """Draw in `wanted` (the screenshots' dark shots): asked of the platform, and
        drawn by DraftDeck alone where the platform cannot switch (offscreen does not)."""
        hints = self.app.styleHints()
        hints.setColorScheme(wanted)
        if hints.colorScheme() != wanted:  # no colorSchemeChanged is coming
            self.apply(wanted)


_scheme: list[Scheme] = []  # the one Scheme, made on first use


def scheme() -> Scheme:
    if not _scheme:
        app = QApplication.instance()
        assert isinstance(app, QApplication), "create the QApplication first"
        _scheme.append(Scheme(app))
    return _scheme[0]


def colours() -> Colours:
    """The colours to draw in now."""
    return scheme().colours
