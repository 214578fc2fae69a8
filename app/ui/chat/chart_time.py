"""The time axis the Chat charts share: it runs a quarter further than the data and
moves only when the data leaves it, or fills less than two thirds of it. A plot whose
range changes lays its axis out and draws its labels anew, most of its paint: fitted to
the data at every redraw (ten a second), four plots took 16.5 ms to paint, 6-7.7 ms so."""

from __future__ import annotations

MIN_SPAN = 1.0  # seconds the axis shows at least
AHEAD = 0.25  # how much further than the data's span the axis runs
FILLED = 2 / 3  # the least share of the axis the data fills


def time_window(shown: tuple[float, float], first: float, last: float) -> tuple[float, float]:
    """The time axis for data from `first` to `last` seconds: `shown` while it serves."""
    span = max(last - first, MIN_SPAN)
    low, high = shown
    if low <= first and last <= high and (high - low) * FILLED <= span:
        return shown
    return first, first + span * (1 + AHEAD)
