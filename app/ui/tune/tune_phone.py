"""What the Tune page says about the phone: the forecast for the pair on the phone the
window's forecasts are about (the Pair page chooses it), the line "best on the phone:
d = N", and each row's forecast uplift. Qt-free: it reads files, so the page works it out
off the GUI thread (background.run) and renders it.

Tune measures this computer; of what it measures only the acceptance by draft position
carries over to a phone (the two models' and the text's), so the phone figures come
from the forecast (core/measure/phone_forecast.py), never from this computer's tok/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import FileError
from app.core.measure.phone_forecast import ForecastRow, NoForecast, PhoneForecast, pair_forecast
from app.core.measure.phone_profiles import chosen_device
from app.ui.base.phone_profile import current_device, percent

CARRIES_OVER = (
    "Of what Tune measures here, only the acceptance by draft position carries over to a "
    "phone; tok/s, the cost ratio c and the best thread count are this computer's."
)


@dataclass(frozen=True)
class PhoneShown:
    """The phone part of the Tune page for one pair."""

    device: str | None
    forecast: PhoneForecast | NoForecast | None  # None: no phone chosen
    profiles: bool = True  # there are phone profiles to choose from

    @property
    def best_length(self) -> int | None:
        return self.forecast.best_draft_length if isinstance(self.forecast, PhoneForecast) else None

    def line(self) -> str:
        """One short line under the table: "Best on the phone (RedMagic 11 Pro, by the
        forecast): d = 3." or that there is none (`tip` says why and what carries over)."""
        forecast = self.forecast
        if isinstance(forecast, PhoneForecast):
            return (
                f"Best on the phone ({forecast.device}, by the forecast): d = "
                f"{forecast.best_draft_length}."
            )
        if forecast is None:
            return "Best on the phone: no phone chosen (choose yours on the Pair page)."
        return "Best on the phone: no forecast yet."

    def tip(self) -> str:
        """The line's tooltip: why there is no forecast, or where it comes from."""
        forecast = self.forecast
        if isinstance(forecast, PhoneForecast):
            return (
                "Apply Best writes this length into the phone's recipe (the target's "
                f"config.json). {CARRIES_OVER} {' '.join(forecast.assumptions)}"
            )
        if isinstance(forecast, NoForecast):
            return f"{forecast.reason} {CARRIES_OVER}"
        if self.profiles:
            return (
                "Choose your phone on the Pair page: its forecast then shows here, and Apply "
                f"Best writes the best length for it into the phone's recipe. {CARRIES_OVER}"
            )
        return f"No phone profile: record a phone result on the Phone page. {CARRIES_OVER}"

    def uplift_text(self, draft_length: int) -> str | None:
        """A row's phone column: the forecast uplift at its length ("+30 %"); None when
        the forecast has no such length (or there is none)."""
        row = self._row(draft_length)
        return None if row is None else percent(row.uplift)

    def uplift_value(self, draft_length: int) -> float | None:
        row = self._row(draft_length)
        return None if row is None else row.uplift

    def uplift_tip(self, draft_length: int) -> str | None:
        row = self._row(draft_length)
        if row is None or not isinstance(self.forecast, PhoneForecast):
            return None
        return (
            f"On {self.forecast.device}, by the forecast (not measured there): "
            f"{row.plain_tok_s:.1f} → {row.spec_tok_s:.1f} tok/s at d = {draft_length}, "
            f"{percent(row.uplift)} (likely {percent(row.uplift_low)} to "
            f"{percent(row.uplift_high)}). {' '.join(self.forecast.assumptions)}"
        )

    def _row(self, draft_length: int) -> ForecastRow | None:
        forecast = self.forecast
        if not isinstance(forecast, PhoneForecast):
            return None
        try:
            return forecast.row(draft_length)
        except KeyError:
            return None


def work_out(target: Path, draft: Path) -> PhoneShown:
    """The forecast for the pair on the phone the user chose (on the Pair page; reads
    files: off the GUI thread); a file that cannot be read is said as the reason, naming
    it. Only a phone the user chose: Apply Best writes its best length into the phone's
    recipe, which a profile merely shown first must not decide."""
    names, device = current_device()
    if device is None or device != chosen_device():
        return PhoneShown(None, None, bool(names))
    try:
        return PhoneShown(device, pair_forecast(target, draft, device))
    except FileError as exc:
        return PhoneShown(device, NoForecast(f"{exc.path}: {exc.problem}"))
