"""The Phone page's recorded results, worked out without Qt: which phone's results are
shown, each result as the table's cells, how far the forecast made before it was off,
and recording one (with the forecast made just before it) or putting a deleted one back.
The panel (phone_results_panel.py) renders this and forwards the user's clicks; the
functions here read and write files, so the panel calls them off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.core.measure.phone_forecast import NoForecast, pair_forecast
from app.core.measure.phone_profiles import pack_ref, profile_for
from app.core.measure.phone_results import (
    PhoneResult,
    RecordedForecast,
    add_result,
    list_results,
    phones,
)
from app.ui.base.phone_profile import FORECAST_LENGTHS, current_device, percent

COLUMNS = ("Date", "Pair", "d", "Plain → speculative", "Forecast made before")
CLOSE_ENOUGH = 0.005  # under half a percent off: "spot on"


def shown_date(iso: str) -> str:
    """A result's date in local time, to the minute ("2026-12-06 14:05")."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def figures(result: PhoneResult) -> str:
    return f"{result.plain_tok_s:.1f} → {result.spec_tok_s:.1f} tok/s ({percent(result.uplift)})"


def forecast_words(result: PhoneResult) -> str:
    """How far the forecast made just before recording was off, in the table's words."""
    made, error = result.forecast, result.forecast_error
    if made is None or error is None:
        return "none could be made then"
    if abs(error) < CLOSE_ENOUGH:
        return f"{made.spec_tok_s:.1f} tok/s: spot on"
    way = "too high" if error > 0 else "too low"
    return f"{made.spec_tok_s:.1f} tok/s: {round(abs(error) * 100)} % {way}"


def forecast_tip(result: PhoneResult) -> str:
    made = result.forecast
    if made is None:
        return (
            "No forecast could be made when this was recorded (no acceptance measured for "
            "the pair, or no phone profile)."
        )
    inside = made.uplift_low <= result.uplift <= made.uplift_high
    return (
        f"Forecast from the profile {made.device}, made just before this result was "
        f"recorded: {made.spec_tok_s:.1f} tok/s speculative, uplift {percent(made.uplift)} "
        f"(likely {percent(made.uplift_low)} to {percent(made.uplift_high)}). The phone "
        f"gave {result.spec_tok_s:.1f} tok/s, uplift {percent(result.uplift)}: "
        + ("inside the likely range." if inside else "outside the likely range.")
    )


def cells(result: PhoneResult) -> tuple[str, ...]:
    return (
        shown_date(result.date),
        f"{result.target.name} + {result.draft.name}",
        str(result.draft_length),
        figures(result),
        forecast_words(result),
    )


def phone_choices(attached: str | None) -> list[str]:
    """The phones the panel offers: the attached one first, then those with results."""
    names = phones()
    return ([attached] if attached else []) + [n for n in names if n != attached]


def shown_results(
    attached: str | None, wanted: str | None
) -> tuple[list[str], str | None, list[PhoneResult]]:
    """The phones offered, the one to show (`wanted`, else the attached one, else the
    latest recorded) and its results."""
    names = phone_choices(attached)
    phone = wanted if wanted in names else (names[0] if names else None)
    return names, phone, results_of(phone)


def results_of(phone: str | None) -> list[PhoneResult]:
    """The phone's results, the latest first."""
    return list(reversed(list_results(phone))) if phone else []


def forecast_before(phone: str, target: Path, draft: Path, d: int) -> RecordedForecast | None:
    """The forecast for this result as DraftDeck would have shown it just now: from the
    phone's own profile (its earlier results, or published figures of that name), else
    from the chosen profile. None when no forecast can be made, or d is beyond 1-6."""
    device = phone if profile_for(phone) is not None else current_device()[1]
    if device is None or d not in FORECAST_LENGTHS:
        return None
    forecast = pair_forecast(target, draft, device)
    if isinstance(forecast, NoForecast):
        return None
    row = forecast.row(d)
    return RecordedForecast(device, row.spec_tok_s, row.uplift, row.uplift_low, row.uplift_high)


@dataclass(frozen=True)
class NewResult:
    """What the Record dialog gives."""

    phone: str
    target: Path
    draft: Path
    plain_tok_s: float
    spec_tok_s: float
    draft_length: int
    phone_ram: int = 0  # the attached phone's RAM, 0 when not attached


def record(new: NewResult) -> PhoneResult:
    """Record the result with the forecast made just before (a UsageError for figures
    no phone gives)."""
    made = forecast_before(new.phone, new.target, new.draft, new.draft_length)
    return add_result(
        new.phone,
        pack_ref(new.target),
        pack_ref(new.draft),
        new.plain_tok_s,
        new.spec_tok_s,
        new.draft_length,
        made,
        phone_ram=new.phone_ram,
    )


def put_back(result: PhoneResult) -> PhoneResult:
    """A deleted result again, as it was (its date and forecast kept)."""
    return add_result(
        result.phone,
        result.target,
        result.draft,
        result.plain_tok_s,
        result.spec_tok_s,
        result.draft_length,
        result.forecast,
        date=result.date,
        phone_ram=result.phone_ram,
    )
