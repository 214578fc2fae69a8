"""A pyqtgraph plot in the scheme's chart colours: pyqtgraph draws black on white, or
white on black, by its own global options and never looks at the palette."""

from __future__ import annotations

import pyqtgraph as pg

from app.ui.base.colours import Colours


def paint_plot(plot: pg.PlotItem, now: Colours) -> None:
    """The plot's axes, tick labels and title in `now`'s chart text colour."""
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(now.chart_text)
        axis.setTextPen(now.chart_text)
    plot.titleLabel.setText(plot.titleLabel.text, color=now.chart_text)
