"""Every fixed colour DraftDeck draws, for a light and a dark window (app/ui/base/scheme.py
picks one and follows the system). Text colours keep a WCAG contrast of at least 4.5
against the background they are drawn on, in both (tests/ui/base/test_colours.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Colours:
    # Words in colour, on the window, the base and the details pane alike.
    hint: str  # page hints and secondary words
    faint: str  # messages left out of the context window
    error: str
    caution: str
    good: str
    accent: str  # links drawn by hand, the engine generating, the chart's first line
    # Areas.
    sidebar: str
    sidebar_text: str
    sidebar_selected: str
    sidebar_selected_text: str
    grid: str
    selection: str
    selection_text: str
    details: str
    details_border: str
    draft: str  # the background of tokens the draft proposed and the target accepted
    best_row: str  # the Tune results' best setting
    # Verdict cards and pair-matrix cells: (background, ink) per level.
    compatible: tuple[str, str]
    warnings: tuple[str, str]
    cannot_pay: tuple[str, str]
    blocked: tuple[str, str]
    # Charts.
    chart: str
    chart_text: str
    chart_bars: str
    chart_lines: tuple[str, ...]  # one per series, the first also for single curves

    def of(self, role: str) -> str:
        """The colour named `role` (a field name): tables of states name their colour."""
        value = getattr(self, role)
        assert isinstance(value, str), role
        return value

    def style_values(self) -> dict[str, str]:
        """The plain colours by name, for the style sheet's ${name} placeholders."""
        return {key: value for key, value in asdict(self).items() if isinstance(value, str)}


@dataclass(frozen=True)
class Palette:
    """A window palette's colours, for a dark scheme the platform leaves light (offscreen,
    Fusion on a desktop that says "dark" but hands Qt a light palette)."""

    window: str
    window_text: str
    base: str
    alternate_base: str
    text: str
    button: str
    disabled_text: str
    link: str
    tooltip: str


LIGHT = Colours(
    hint="#5c6475",
    faint="#60666f",
    error="#a1261b",
    caution="#8a5300",
    good="#1e6b34",
    accent="#3b5bdb",
    sidebar="#1f2a44",
    sidebar_text="#e8ecf5",
    sidebar_selected="#4a67c9",
    sidebar_selected_text="#ffffff",
    grid="#e1e4ea",
    selection="#dbe4fb",
    selection_text="#111111",
    details="#fbfcfe",
    details_border="#d6dae3",
    draft="#ffe8a3",
    best_row="#e8f5ec",
    compatible=("#e8f5ec", "#1e6b34"),
    warnings=("#fff5e1", "#8a5300"),
    cannot_pay=("#eef1f6", "#3d4a63"),
    blocked=("#fdecea", "#a1261b"),
    chart="#ffffff",
    chart_text="#333333",
    chart_bars="#5b7bd5",
    chart_lines=("#3b5bdb", "#1e6b34", "#8a5300", "#862e9c"),
)

DARK = Colours(
    hint="#a3abba",
    faint="#a0a6b0",
    error="#ff8a7d",
    caution="#f0b35a",
    good="#6fcf8a",
    accent="#8fa8ff",
    sidebar="#121829",
    sidebar_text="#e8ecf5",
    sidebar_selected="#3d5bb8",
    sidebar_selected_text="#ffffff",
    grid="#3a3f47",
    selection="#2f4a8a",
    selection_text="#ffffff",
    details="#1b1d21",
    details_border="#3a3f47",
    draft="#453708",
    best_row="#1c3526",
    compatible=("#1c3526", "#6fcf8a"),
    warnings=("#3b2e12", "#f0b35a"),
    cannot_pay=("#262d3d", "#c5cde0"),
    blocked=("#42201c", "#ff8a7d"),
    chart="#17191c",
    chart_text="#d0d4da",
    chart_bars="#6f8be0",
    chart_lines=("#8fa8ff", "#6fcf8a", "#f0b35a", "#d09af0"),
)

DARK_PALETTE = Palette(
    window="#202226",
    window_text="#e6e8eb",
    base="#17191c",
    alternate_base="#1d2024",
    text="#e6e8eb",
    button="#2b2e33",
    disabled_text="#8b9099",
    link=DARK.accent,
    tooltip="#2b2e33",
)
