"""The phone forecast under a Chat reply.

After each speculative reply, a greedy one's acceptance by position goes into the pair's
tallies (pair_acceptance.add_tallies: a file, so off the GUI thread), and the reply's
figures gain one line: what the pair is forecast to do on the chosen phone profile (the
Pair page chooses it), labelled as a forecast for the phone, apart from the figures
measured on this computer above it. Sampled replies and adaptive drafting's do not feed
the tallies (pair_acceptance says why); their line (from the tallies as they are) says
so in its tooltip.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject

from app.core.measure.chat_record import GREEDY_WORD
from app.core.measure.metrics import ADAPTIVE, DecodeStats
from app.core.measure.pair_acceptance import add_tallies, read_tallies
from app.core.measure.phone_forecast import NoForecast, PhoneForecast, pair_forecast
from app.core.measure.words import Mode
from app.ui.base import background
from app.ui.base.phone_profile import current_device, percent, phone_draft_length

log = logging.getLogger("draftdeck.ui.chat")
SAMPLED_TIP = (
    "This reply was sampled: sampled replies do not add to the greedy acceptance the "
    "forecast uses (choose Greedy for replies that do)."
)
ADAPTIVE_TIP = (
    "Adaptive drafting stopped this reply's rounds where the draft was unsure, so its "
    "acceptance would read high for a phone, which drafts the full length: it does not "
    "add to the forecast's acceptance (turn adaptive drafting off for replies that do, or "
    "measure on the Pair page)."
)


@dataclass(frozen=True)
class ForecastLine:
    text: str  # "On Pixel 8: about 14.2 tok/s at d = 3 (+30 %, forecast)"
    tip: str  # what it is, and where it comes from


def forecast_line(
    forecast: PhoneForecast, draft_length: int | None, greedy: bool, adaptive: bool = False
) -> ForecastLine:
    """The line for a reply: at the phone recipe's draft length (the best when it has
    none the forecast covers), the best named when it differs."""
    d = draft_length or forecast.best_draft_length
    row = forecast.row(d)
    text = (
        f"On {forecast.device}: about {row.spec_tok_s:.1f} tok/s at d = {d} "
        f"({percent(row.uplift)}, forecast)"
    )
    if d != forecast.best_draft_length:
        text += f"; best there d = {forecast.best_draft_length}"
    where = (
        f"the recipe's draft length (d = {d})"
        if draft_length
        else f"the best draft length there (d = {d})"
    )
    tip = (
        f"A forecast for {forecast.device}, not measured on it: plain "
        f"{row.plain_tok_s:.1f} tok/s, speculative {row.spec_tok_s:.1f} tok/s at {where}, "
        f"uplift {percent(row.uplift)} (likely {percent(row.uplift_low)} to "
        f"{percent(row.uplift_high)}). It uses the greedy acceptance by draft position "
        "measured on this computer and the phone profile's speeds; the figures above are "
        "this computer's, measured. Choose the phone on the Pair page."
    )
    if not greedy:
        tip += " " + SAMPLED_TIP
    elif adaptive:
        tip += " " + ADAPTIVE_TIP
    return ForecastLine(text, tip)


def after_reply(
    target: Path, draft: Path, stats: DecodeStats, exact: bool | None
) -> ForecastLine | None:
    """Add a greedy reply's tallies, then the forecast line (None: no phone profile, or
    no forecast yet). Reads and writes files: off the GUI thread."""
    greedy = stats.sampler == GREEDY_WORD
    if greedy:
        add_tallies(target, draft, stats, exact)
    _names, device = current_device()
    if device is None:
        return None
    tallies = read_tallies(target, draft)
    if tallies is None:
        return None
    forecast = pair_forecast(target, draft, device, tallies)
    if isinstance(forecast, NoForecast):
        return None
    return forecast_line(forecast, phone_draft_length(target), greedy, stats.drafting == ADAPTIVE)


class ChatForecast(QObject):
    """Works each speculative reply's line out in the background and hands it to `show`
    (the transcript's message, then a redraw)."""

    def reply_finished(
        self,
        pair: tuple[Path | None, Path | None],
        stats: DecodeStats,
        exact: bool | None,
        show: Callable[[ForecastLine], None],
    ) -> None:
        target, draft = pair
        if stats.mode != Mode.SPECULATIVE or target is None or draft is None:
            return
        # Each reply its own key: a quick second reply must not drop the first's line.
        background.run(
            self,
            f"reply-{id(stats)}",
            lambda: after_reply(target, draft, stats, exact),
            lambda line: show(line) if line is not None else None,
            lambda error: log.warning("no phone forecast for the reply: %s", error),
        )
