"""Live charts for a chat: tok/s, rolling acceptance, mean accepted length, and
acceptance by draft position. Samples go into numpy ring buffers as rounds arrive; the
plots are redrawn by a timer at about 10 Hz, never per token."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGridLayout, QWidget

from app.core.measure.metrics import acceptance_by_position, count_positions
from app.engine.protocol import Mode, Round, Rounds
from app.ui.base.chart_colours import paint_plot
from app.ui.base.scheme import colours, scheme
from app.ui.chat.chart_ring import Before, Ring, add_tallies
from app.ui.chat.chart_time import time_window
from app.ui.chat.chart_words import (
    ACCEPTANCE_TIP,
    ASIDE_TIP,
    DRAFTED_WORDS,
    LENGTH_TIP,
    LENGTH_TITLE,
    POSITION_TIP,
    ROLLING,
    SPEED_TIP,
    SPEED_TITLE,
    SPEED_WINDOW,
    TITLE_SIZE,
    speed_title,
)

REDRAW_MS = 100
# The four plots are redrawn in turn, one per tick, so each is redrawn every
# REDRAW_MS but the painting cost (which dominates: ~10 ms a plot in software
# rendering) is spread over the interval instead of landing in one frame.
TICK_MS = REDRAW_MS // 4
PLOT_WIDTH = 240  # px a plot needs for its axes and title to read well
SAVED_HEADROOM = 1.15  # a reopened chat's speed axis: its top above the fastest dot


class ChatCharts(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # No antialiasing: in software rendering it doubles the paint cost of a plot.
        pg.setConfigOptions(antialias=False)
        self.speed = Ring()
        self.reply_speed = Ring()  # each finished reply's own decode tok/s, at its end
        self.acceptance = Ring()
        self.accepted_length = Ring()
        self.drafted_length = Ring()  # tokens drafted per round, rolling
        self.asides = Ring()  # when adaptive drafting stepped aside (y: 0)
        self.reference_tok_s: float | None = None
        self.position_reached: list[int] = []
        self.position_accepted: list[int] = []
        self._recent: list[Round] = []
        self._batches: list[tuple[float, int]] = []  # (elapsed, tokens) of this reply
        self._offset = 0.0  # seconds of earlier replies, so time runs on across turns
        self._last_elapsed = 0.0
        self._dirty = [False] * 4
        self._turn = 0
        self._time = (0.0, 1.0)  # the time axis shown (seconds)
        self._drafting = True  # the reply being drawn is speculative
        # What stood before the last reply began, so Regenerate can take it away.
        self._before_last = Before(0.0, [], [], [], None)

        # Short titles and words on the plots, the rest in tooltips: four plots share
        # about 400 px at 1024 px, and a clipped title helps nobody.
        self.speed_plot = self._plot(SPEED_TITLE, "tok/s", SPEED_TIP)
        self.acceptance_plot = self._plot("Acceptance", "accepted / drafted", ACCEPTANCE_TIP)
        self.length_plot = self._plot(LENGTH_TITLE, "tokens / round", LENGTH_TIP)
        self.position_plot = self._plot("By draft position", "acceptance", POSITION_TIP)
        self.position_plot.setLabel("bottom", "draft position")
        self.position_plot.showGrid(x=False, y=True, alpha=0.2)
        self.position_plot.setYRange(0, 1)
        self.acceptance_plot.setYRange(0, 1)
        self._show_positions(0)
        self._show_length_range(0)
        self.speed_curve = self.speed_plot.plot()
        # Every reply gets its dot, even one that arrived in a single batch (no line).
        self.reply_dots = self.speed_plot.plot(pen=None, symbol="o", symbolSize=8)
        # The line's words go in the title, as a legend: on the line they covered the
        # curve that runs about it (or ran off the plot: "ain decoding").
        self.reference_line = pg.InfiniteLine(angle=0)
        self.reference_line.hide()
        self.speed_plot.addItem(self.reference_line)
        self.acceptance_curve = self.acceptance_plot.plot()
        self.length_curve = self.length_plot.plot()
        self.drafted_curve = self.length_plot.plot()
        # A mark on the time axis where adaptive drafting stepped aside (went plain).
        self.aside_marks = self.length_plot.plot(pen=None, symbol="t", symbolSize=10)
        self.aside_marks.setToolTip(ASIDE_TIP)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.6)
        self.position_plot.addItem(self.bars)
        self._recolour()
        scheme().changed.connect(self._recolour)

        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.columns = 0
        self._arrange(2)
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._on_tick)  # runs only while something is to draw

    def plots(self) -> tuple[pg.PlotWidget, ...]:
        """The plots in drawing order (the parts of _draw)."""
        return (self.speed_plot, self.acceptance_plot, self.length_plot, self.position_plot)

    @staticmethod
    def _plot(title: str, unit: str, tip: str) -> pg.PlotWidget:
        plot = pg.PlotWidget()
        plot.setTitle(title, size=TITLE_SIZE)
        plot.setToolTip(tip)
        # Seconds throughout: pyqtgraph's own SI prefix showed ms for one reply and s
        # for a longer chat.
        plot.getAxis("bottom").enableAutoSIPrefix(False)
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.setLabel("bottom", "time (s)")
        plot.setLabel("left", unit)
        plot.showGrid(x=True, y=True, alpha=0.2)
        return plot

    def _recolour(self) -> None:
        """Everything drawn in the scheme's colours (pyqtgraph's own default is a black
        background whatever the palette)."""
        now = colours()
        for plot in self.plots():
            plot.setBackground(now.chart)
            paint_plot(plot.getPlotItem(), now)
        pen = pg.mkPen(now.chart_lines[0], width=2)
        for curve in (self.speed_curve, self.acceptance_curve, self.length_curve):
            curve.setPen(pen)
        self.reply_dots.setSymbolBrush(now.chart_lines[0])
        self.reply_dots.setSymbolPen(now.chart)
        self.reference_line.setPen(pg.mkPen(now.error, style=Qt.PenStyle.DashLine))
        self.bars.setOpts(brush=now.chart_bars)
        self.aside_marks.setSymbolBrush(now.error)
        self.aside_marks.setSymbolPen(now.error)
        self.drafted_curve.setPen(pg.mkPen(now.chart_lines[1], width=2, style=Qt.PenStyle.DashLine))
        key = f"<span style='color:{now.chart_lines[1]}'>- - {DRAFTED_WORDS}</span>"
        self.length_plot.setTitle(f"{LENGTH_TITLE} &nbsp;{key}", size=TITLE_SIZE)
        # The title's key is drawn in the reference line's colour.
        self.speed_plot.setTitle(speed_title(self.reference_line.isVisible()), size=TITLE_SIZE)

    def _arrange(self, columns: int) -> None:
        """The plots in a 2x2 grid, or one above the other when two side by side would
        be too narrow for their axes (a 1024 px window leaves the charts ~250 px)."""
        if columns == self.columns:
            return
        self.columns = columns
        for index, plot in enumerate(self.plots()):
            self.grid.removeWidget(plot)
            self.grid.addWidget(plot, index // columns, index % columns)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._arrange(2 if event.size().width() >= 2 * PLOT_WIDTH else 1)
        super().resizeEvent(event)

    # -- data in ---------------------------------------------------------------------------

    def _rings(self) -> tuple[Ring, ...]:
        return (
            self.speed,
            self.reply_speed,
            self.acceptance,
            self.accepted_length,
            self.drafted_length,
            self.asides,
        )

    def _remember_before(self) -> None:
        self._before_last = Before(
            self._offset,
            list(self.position_reached),
            list(self.position_accepted),
            list(self._recent),
            self.reference_tok_s,
        )

    def drop_last_reply(self) -> None:
        """Regenerate: the discarded reply's samples, dot and tallies leave the charts
        (they showed a reply no longer in the transcript), and time runs on from where
        it began. Samples are in time order, so the kept ones are a prefix."""
        before = self._before_last
        for ring in self._rings():
            xs = ring.x[: ring.count]
            ring.count = int(np.searchsorted(xs, before.offset, side="right"))
        self.position_reached = list(before.reached)
        self.position_accepted = list(before.accepted)
        self._recent = list(before.recent)
        self.reference_tok_s = before.reference
        self._offset, self._last_elapsed, self._batches = before.offset, 0.0, []
        self.redraw()

    def start_reply(self, mode: str = Mode.SPECULATIVE) -> None:
        self._offset += self._last_elapsed
        self._last_elapsed = 0.0
        self._remember_before()
        self.speed_plot.enableAutoRange(y=True)  # a live curve again, after saved dots
        self._batches = []
        # Plain decoding drafts nothing: it has no acceptance to draw (not a flat 1.0).
        self._drafting = mode == Mode.SPECULATIVE

    def add_rounds(self, event: Rounds) -> None:
        """Feed one batch of rounds from the engine."""
        elapsed = event.elapsed
        tokens = len(event.tokens)
        now = self._offset + elapsed
        # Speed over the last SPEED_WINDOW seconds, not per batch: batches are 20 ms apart
        # and a per-batch rate would be mostly noise. A reply's first batch only starts
        # the clock: its time includes the prompt's prefill, which is not decoding.
        first = not self._batches and self._last_elapsed == 0.0
        self._batches.append((elapsed, tokens))
        while self._batches and elapsed - self._batches[0][0] > SPEED_WINDOW:
            self._batches.pop(0)
        span = elapsed - (self._batches[0][0] if len(self._batches) > 1 else self._last_elapsed)
        counted = sum(n for _, n in self._batches[1:]) if len(self._batches) > 1 else tokens
        if span > 0 and counted and not first:
            self.speed.append(now, counted / span)
        self._last_elapsed = elapsed
        self._mark(0, 1, 2, 3)
        if not self._drafting:
            return
        for r in event.rounds:
            self._recent.append(r)
            if r.note:
                self.asides.append(now, 0.0)
            count_positions(self.position_reached, self.position_accepted, r.drafted, r.accepted)
        del self._recent[:-ROLLING]
        if self._recent:
            window = self._recent
            drafted_sum = sum(r.drafted for r in window)
            if drafted_sum:
                self.acceptance.append(now, sum(r.accepted for r in window) / drafted_sum)
            self.accepted_length.append(now, sum(r.emitted for r in window) / len(window))
            self.drafted_length.append(now, sum(r.drafted for r in window) / len(window))

    def finish_reply(self, tok_s: float | None) -> None:
        """Mark the reply's own decode tok/s (the figure under the reply) at its end."""
        if tok_s:
            self.reply_speed.append(self._offset + self._last_elapsed, tok_s)
            self._mark(0)

    def show_saved(self, replies: Sequence[Mapping[str, Any]]) -> None:
        """A reopened conversation's figures: each reply's own (no per-round samples
        are kept), at the time it ended, and the tallies by draft position."""
        self.clear()
        for stats in replies:
            self._remember_before()  # the last one's: Regenerate may take it away
            self._offset += float(stats.get("decode_seconds") or 0.0)
            tok_s = stats.get("tok_s")
            if tok_s:
                self.reply_speed.append(self._offset, float(tok_s))
                if stats.get("mode") == Mode.PLAIN:
                    self.reference_tok_s = float(tok_s)
            if stats.get("mode") != Mode.SPECULATIVE or not stats.get("drafted"):
                continue  # plain decoding drafts nothing: it has no acceptance
            if stats.get("acceptance") is not None:
                self.acceptance.append(self._offset, float(stats["acceptance"]))
            if stats.get("mean_accepted_length"):
                self.accepted_length.append(self._offset, float(stats["mean_accepted_length"]))
            add_tallies(self.position_reached, stats.get("position_reached"))
            add_tallies(self.position_accepted, stats.get("position_accepted"))
        self.position_accepted += [0] * (len(self.position_reached) - len(self.position_accepted))
        self.redraw()
        # One dot per reply, no curve: auto-range zoomed onto one dot (326.8-327.4 tok/s)
        # looked like a close-up of a curve. From 0, the dots read as the totals they are.
        speeds = [*self.reply_speed.data()[1], self.reference_tok_s or 0.0]
        if max(speeds) > 0:
            self.speed_plot.setYRange(0, max(speeds) * SAVED_HEADROOM, padding=0)

    def set_reference(self, tok_s: float | None) -> None:
        self.reference_tok_s = tok_s
        self._mark(0)

    def clear(self) -> None:
        for ring in self._rings():
            ring.clear()
        self.position_reached = []
        self.position_accepted = []
        self._recent = []
        self._batches = []
        self._offset = self._last_elapsed = 0.0
        self._before_last = Before(0.0, [], [], [], self.reference_tok_s)
        self.redraw()  # empty now: the auto-range below must not fit the old curves
        self._reset_axes()

    def _reset_axes(self) -> None:
        """The axes of an empty chat: the old chat's time span and speeds would stay on
        screen until enough new data pushed them out (a new pair looked like the old)."""
        self._time = (0.0, 1.0)
        for plot in (self.speed_plot, self.acceptance_plot, self.length_plot):
            plot.setXRange(*self._time, padding=0)
        self.speed_plot.setYRange(0, 1, padding=0)
        self.speed_plot.enableAutoRange(y=True)

    def per_position(self) -> list[float]:
        """Acceptance by draft position over the chat (0 where never reached)."""
        rates = acceptance_by_position(self.position_reached, self.position_accepted)
        return [rate or 0.0 for rate in rates]

    # -- drawing ---------------------------------------------------------------------------

    def redraw(self) -> None:
        """Bring every plot up to date at once (exports, tests)."""
        for part in range(4):
            self._draw(part)
        self._dirty = [False] * 4

    def _mark(self, *parts: int) -> None:
        for part in parts:
            self._dirty[part] = True
        if not self.timer.isActive():
            self.timer.start()

    def _on_tick(self) -> None:
        part = self._turn
        self._turn = (self._turn + 1) % 4
        if self._dirty[part]:
            self._dirty[part] = False
            self._draw(part)
        if not any(self._dirty):
            self.timer.stop()  # an idle chart costs no wake-ups

    def _fit_time(self, plot: pg.PlotWidget) -> None:
        """The plot's time axis, shared by the charts: it moves only when the data
        leaves it (chart_time.py), not at every redraw."""
        spans = [(ring.x[0], ring.x[ring.count - 1]) for ring in self._rings() if ring.count]
        if spans:
            first, last = min(s[0] for s in spans), max(s[1] for s in spans)
            self._time = time_window(self._time, float(first), float(last))
        if tuple(plot.viewRange()[0]) != self._time:
            plot.setXRange(*self._time, padding=0)

    def _draw(self, part: int) -> None:
        if part < 3:
            self._fit_time(self.plots()[part])
        if part == 0:
            self.speed_curve.setData(*self.speed.data())
            self.reply_dots.setData(*self.reply_speed.data())
            shown = bool(self.reference_tok_s)
            if shown:
                self.reference_line.setValue(self.reference_tok_s)
            if shown != self.reference_line.isVisible():
                self.reference_line.setVisible(shown)
                self.speed_plot.setTitle(speed_title(shown), size=TITLE_SIZE)
                if not shown and not (self.speed.count or self.reply_speed.count):
                    # An empty plot kept the hidden line's range (the old pair's speed).
                    self._reset_axes()
        elif part == 1:
            self.acceptance_curve.setData(*self.acceptance.data())
        elif part == 2:
            self.length_curve.setData(*self.accepted_length.data())
            self.drafted_curve.setData(*self.drafted_length.data())
            self.aside_marks.setData(*self.asides.data())
            self._show_length_range(len(self.position_reached))
        else:
            positions = self.per_position()
            self.bars.setOpts(x=np.arange(1, len(positions) + 1), height=positions)
            self._show_positions(len(positions))
        # A plot whose range follows its data fits it only when painted, and the new
        # range dirtied it again: each update painted twice (2-3 ms a paint). Fitted
        # now, before the paint, one update is one paint.
        self.plots()[part].getViewBox().prepareForPaint()

    def _show_positions(self, count: int) -> None:
        """Whole draft positions only (never 1.5); position 1 before any round."""
        shown = max(count, 1)
        ticks = [(float(i), str(i)) for i in range(1, shown + 1)]
        self.position_plot.getAxis("bottom").setTicks([ticks, []])
        self.position_plot.setXRange(0.5, shown + 0.5, padding=0)

    def _show_length_range(self, draft_length: int) -> None:
        """0 to d + 1 tokens a round: a round emits at least one token and at most every
        draft token and the target's own (plain decoding: d = 0, one token a round)."""
        self.length_plot.setYRange(0, (draft_length + 1) * 1.05, padding=0)

    def save_png(self, path: str) -> bool:
        self.redraw()
        return bool(self.grab().save(path))
