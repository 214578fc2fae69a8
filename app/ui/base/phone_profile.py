"""Which phone profile the window's forecasts are about (the Pair page chooses it; Chat's
figures follow it). Plain Python, no Qt: it reads files, so call it off the GUI thread."""

from __future__ import annotations

from pathlib import Path

from app.core.infra.errors import FileError
from app.core.measure.phone_profiles import chosen_device, device_names
from app.core.recipe.files import TARGET_CONFIG, read_recipe

FORECAST_LENGTHS = range(1, 7)  # the draft lengths a phone forecast covers


def default_device(names: list[str], chosen: str | None) -> str | None:
    """The profile to show: the user's choice while it is still offered, else the first
    (recorded phones come first: the user's own phone before published figures)."""
    if chosen is not None and chosen in names:
        return chosen
    return names[0] if names else None


def current_device() -> tuple[list[str], str | None]:
    """The offered profiles and the one the forecasts are about."""
    names = device_names()
    return names, default_device(names, chosen_device())


def percent(value: float) -> str:
    """An uplift as users read it: 0.3 -> "+30 %", -0.05 -> "-5 %"."""
    shown = round(value * 100)
    return f"+{shown} %" if shown > 0 else f"{shown} %"


def phone_draft_length(target: Path) -> int | None:
    """The draft length the phone runs: the target pack's own recipe (never this
    computer's settings); None when it names none the forecast covers."""
    try:
        value = read_recipe(target / TARGET_CONFIG).get("draft_predict_length")
    except FileError:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if value in FORECAST_LENGTHS else None
