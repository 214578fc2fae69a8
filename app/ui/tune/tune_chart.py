"""The Tune page's chart: uplift by draft length, one line per draft and target thread
count (a colour each, a marker per target thread count, a little apart at each length so
no point hides another), with each point's 95 % interval, and a compared run dashed
beside it. Adaptive drafting is a star at its cap (the longest length), a little to its
right."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.core.measure.tune_plan import threads_text
from app.core.measure.tune_results import SettingResult, UpliftCurve, uplift_curves
from app.ui.base.chart_colours import paint_plot
from app.ui.base.scheme import colours, scheme

TITLE_SIZE = "10pt"
# Error-bar caps in draft-length units (one step is 1), whatever the x range.
CAP_WIDTH = 0.2
# Room beside the first and last draft length, in steps: their points and caps show whole.
X_PADDING = 0.5
# What the points and bars are: under the legend, not in the title (a long title sets
# the chart's least width and pushed the plot off a narrow pane).
KEY = "Points: median of the pairs' ratios · bars: 95 % interval"
# Adaptive drafting's points sit this far right of their cap, beside the fixed point
# there, so neither's bar hides the other's.
ADAPTIVE_DODGE = 0.2
# The thread-count lines of a run sit side by side at each draft length, at most this
# far apart in all (so they stay clear of adaptive drafting's dodge), each step at most
# DODGE_STEP: variants of the target's threads at one length were drawn on one spot.
DODGE_SPREAD = 0.16
DODGE_STEP = 0.08
# A fixed line's marker by its target thread count (in the order they come), so two
# lines of one colour scheme still differ in shape.
MARKERS = ("o", "s", "t", "d")


class UpliftChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Held, not subclassed: pyqtgraph has no type hints.
        self.canvas = pg.GraphicsLayoutWidget()
        self.plot = self.canvas.addPlot(row=0, col=0)
        self.plot.setTitle(_title(sampled=False), size=TITLE_SIZE)
        self.plot.setLabel("bottom", "draft length d")
        self.plot.getAxis("bottom").setTickSpacing(1, 1)  # draft lengths are whole numbers
        self.plot.setLabel("left", "uplift over plain decoding", units="x")
        # Below the plot, not over it: inside, it covered points and their bars.
        self.legend = pg.LegendItem(colCount=1)  # two columns of such names: 531 px wide
        self.canvas.addItem(self.legend, row=1, col=0)
        self.key = pg.LabelItem(KEY, size="8pt")
        self.canvas.addItem(self.key, row=2, col=0)
        self._drawn: Callable[[], None] | None = None  # the last draw(), to redraw in a new scheme
        self._recolour()
        scheme().changed.connect(self._recolour)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.canvas)

    def _recolour(self) -> None:
        now = colours()
        self.canvas.setBackground(now.chart)
        paint_plot(self.plot, now)
        self.legend.setLabelTextColor(now.chart_text)
        self.key.setText(KEY, color=now.hint)
        if self._drawn is not None:
            self._drawn()
        else:
            self.plot.clear()
            self._add_parity_line()

    def _add_parity_line(self) -> None:
        """Uplift 1: below it, speculation loses to plain decoding."""
        self.plot.addItem(
            pg.InfiniteLine(
                angle=0, pos=1.0, pen=pg.mkPen(colours().error, style=Qt.PenStyle.DashLine)
            )
        )

    def draw(
        self,
        results: list[SettingResult],
        compared: list[SettingResult] | None = None,
        *,
        sampled: bool = False,
        compared_sampled: bool = False,
        lengths: Sequence[int] = (),
    ) -> None:
        """`sampled`: the run decoded with the recipe's sampler (else greedy); the title
        says which, and a compared run's legend says its own. `lengths`: draft lengths
        to keep in view though not measured yet (the plan's, mid-sweep)."""
        self._drawn = partial(  # to draw again in another scheme
            self.draw,
            results,
            compared,
            sampled=sampled,
            compared_sampled=compared_sampled,
            lengths=lengths,
        )
        if self.plot.titleLabel.text != _title(sampled):
            # A new title lays the chart out again: set only when it changes.
            self.plot.setTitle(_title(sampled), size=TITLE_SIZE)
        self.plot.clear()
        self.legend.clear()
        self._add_parity_line()
        runs = [(results, "", Qt.PenStyle.SolidLine)]
        if compared is not None:
            runs.append((compared, f" (compared, {_mode(compared_sampled)})", Qt.PenStyle.DashLine))
        lines = colours().chart_lines
        for shown, suffix, style in runs:
            curves = uplift_curves(shown)
            # An adaptive curve takes the colour and place of the fixed one of its thread
            # counts, its marker a star.
            counts = list(dict.fromkeys((c.draft_threads, c.target_threads) for c in curves))
            targets = list(dict.fromkeys(t for _, t in counts))
            offsets = dodges(len(counts))
            # Caps no wider than the lines are apart, or they cross their neighbours'.
            cap = min(CAP_WIDTH, offsets[1] - offsets[0]) if len(offsets) > 1 else CAP_WIDTH
            for curve in curves:
                which = counts.index((curve.draft_threads, curve.target_threads))
                colour = lines[which % len(lines)]
                dodge = offsets[which] + (ADAPTIVE_DODGE if curve.adaptive else 0.0)
                xs = np.array([r.setting.draft_length + dodge for r in curve.points])
                ys = np.array([r.uplift for r in curve.points])
                low = ys - np.array([r.interval.low for r in curve.points])
                high = np.array([r.interval.high for r in curve.points]) - ys
                pen = pg.mkPen(colour, width=2, style=style)
                marker = MARKERS[targets.index(curve.target_threads) % len(MARKERS)]
                symbol = "star" if curve.adaptive else marker
                line = self.plot.plot(xs, ys, pen=pen, symbol=symbol, symbolBrush=colour)
                self.legend.addItem(line, curve_name(curve) + suffix)
                self.plot.addItem(
                    pg.ErrorBarItem(x=xs, y=ys, top=high, bottom=low, beam=cap, pen=pen)
                )
        self._fit_x([*lengths, *(r.setting.draft_length for shown, _, _ in runs for r in shown)])
        # The pane never gets narrower than the legend and labels need, or the
        # plot would run off its right edge (the canvas does not say so by itself).
        least = self.canvas.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
        self.canvas.setMinimumWidth(math.ceil(least))
        # A refilled legend moves itself to the canvas's top left, over the title, until
        # its layout runs again: ask for that.
        self.legend.updateGeometry()

    def _fit_x(self, lengths: list[int]) -> None:
        """Every draft length in view with room beside it; the range never shrinks to
        one point's caps (auto-range did, and they then spanned the plot)."""
        lengths = lengths or [1]
        self.plot.setXRange(min(lengths) - X_PADDING, max(lengths) + X_PADDING, padding=0)


def dodges(lines: int) -> list[float]:
    """Where each of `lines` thread-count lines sits beside a draft length: centred on
    it, DODGE_STEP apart, DODGE_SPREAD across at most (one line: on it)."""
    if lines < 2:
        return [0.0] * lines
    step = min(DODGE_STEP, DODGE_SPREAD / (lines - 1))
    return [(i - (lines - 1) / 2) * step for i in range(lines)]


def curve_name(curve: UpliftCurve) -> str:
    """The legend's name of a line: both thread counts, and adaptive drafting if so."""
    drafting = "adaptive, " if curve.adaptive else ""
    return (
        f"{drafting}draft {threads_text(curve.draft_threads)}, "
        f"target {threads_text(curve.target_threads)}"
    )


def _mode(sampled: bool) -> str:
    return "sampled" if sampled else "greedy"


def _title(sampled: bool) -> str:
    return f"Uplift by draft length ({_mode(sampled)})"
