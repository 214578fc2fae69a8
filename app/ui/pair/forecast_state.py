"""What the Pair page says about the chosen pair on a phone, worked out without Qt.

The page's phone part (forecast_panel.py) and its memory line render what this module
decides: which phone profile is chosen, the forecast table's rows as text with the best
length marked, where the acceptance came from, what to do when none is measured yet,
and the pair's memory need under its own recipes beside the phone's RAM. Everything here
reads files and may run off the GUI thread; nothing here imports Qt (issue #47: state
and rules apart from widgets, tested without them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import FileError, PhoneError
from app.core.infra.units import format_bytes
from app.core.measure.pair_acceptance import PositionTallies, read_tallies
from app.core.measure.phone_forecast import NoForecast, PhoneForecast, pair_forecast
from app.core.measure.phone_results import list_results
from app.core.measure.ram_estimate import estimate_model
from app.core.phone.adb import server_running
from app.core.phone.desk import PhoneDesk
from app.core.phone.phone_memory import FITS, TIGHT, TOO_BIG, model_need, needed_words, phone_fit
from app.ui.base.phone_profile import percent

MEASURE_LENGTH = 6  # measured at the longest: its tallies reach every shorter position
HEADERS = ("Draft length", "Plain tok/s", "Speculative tok/s", "Uplift", "Likely range", "")
BEST, CLOSE = "★ best", "≈ as good"  # a length within noise of the best


def uplift_range(low: float, high: float) -> str:
    """ "+22 to +38 %" (the interval the forecast gives the uplift)."""
    return f"{percent(low).removesuffix(' %')} to {percent(high)}"


def acceptance_source(tallies: PositionTallies) -> str:
    """Where the acceptance the forecast uses came from, in words."""
    how = (
        "the target verified exactly (memory normal)"
        if tallies.exact
        else "the target verified at low precision (memory low)"
    )
    return (
        f"Acceptance: measured on this computer over {tallies.tokens:,} tokens of greedy "
        f"speculative decoding ({tallies.rounds:,} rounds; {how}). Speeds: the phone "
        "profile's, not this computer's."
    )


NO_ACCEPTANCE = (
    "No acceptance is measured yet for this pair on this computer: the forecast needs how "
    "often the target accepts the draft's tokens at each position. Measure it here (a "
    "minute or so of greedy speculative decoding at draft length 6), or chat with the pair "
    "greedy with adaptive drafting off: every such reply in Chat adds to it."
)


@dataclass(frozen=True)
class ForecastShown:
    """The forecast part of the page for one pair and phone."""

    device: str | None
    rows: tuple[tuple[str, ...], ...] = ()  # HEADERS' cells, one row per draft length
    best_draft_length: int = 0
    source: str = ""  # where the acceptance came from
    assumptions: tuple[str, ...] = ()
    reason: str = ""  # why there is no forecast ("" when there is one)
    needs_acceptance: bool = False  # offer to measure it

    @property
    def best_row(self) -> int:
        return self.best_draft_length - 1 if self.best_draft_length else -1

    @property
    def title(self) -> str:
        if self.device is None:
            return "Forecast on a phone"
        return f"Forecast on {self.device} (not measured on the phone)"


def table_rows(forecast: PhoneForecast) -> tuple[tuple[str, ...], ...]:
    rows = []
    for row in forecast.rows:
        rows.append(
            (
                f"d = {row.draft_length}",
                f"{row.plain_tok_s:.1f}",
                f"{row.spec_tok_s:.1f}",
                percent(row.uplift),
                uplift_range(row.uplift_low, row.uplift_high),
                _mark(row.draft_length, forecast),
            )
        )
    return tuple(rows)


def _mark(d: int, forecast: PhoneForecast) -> str:
    if d == forecast.best_draft_length:
        return BEST
    return CLOSE if d in forecast.close_lengths else ""


def work_out(target: Path, draft: Path, device: str | None) -> ForecastShown:
    """The forecast for this pair on this phone profile (reads files: off the GUI
    thread). A file that cannot be read is said as the reason, naming it."""
    if device is None:
        return ForecastShown(
            None, reason="No phone profile is known: record a result on the Phone page."
        )
    try:
        tallies = read_tallies(target, draft)
        if tallies is None:
            return ForecastShown(device, reason=NO_ACCEPTANCE, needs_acceptance=True)
        forecast = pair_forecast(target, draft, device, tallies)
    except FileError as exc:
        return ForecastShown(device, reason=f"No forecast: {exc.path}: {exc.problem}")
    if isinstance(forecast, NoForecast):
        return ForecastShown(device, reason=forecast.reason, source=acceptance_source(tallies))
    return ForecastShown(
        device,
        rows=table_rows(forecast),
        best_draft_length=forecast.best_draft_length,
        source=acceptance_source(tallies),
        assumptions=forecast.assumptions,
    )


@dataclass(frozen=True)
class PhoneMemory:
    """The pair's memory need under its own recipes (the phone's), against a phone's RAM."""

    level: str  # phone_memory's FITS, TIGHT or TOO_BIG; "" when not estimated
    text: str  # one line, naming the phone
    tip: str = ""  # every figure, as a push's check says it


LEADS = {FITS: "", TIGHT: ", memory is tight", TOO_BIG: ", not enough memory"}


def phone_memory(
    target: Path, draft: Path, device: str | None, ram: int, where: str
) -> PhoneMemory:
    """What the pair needs on the phone (the packs' own recipes, never this computer's
    settings) against the phone's RAM, judged as a push judges it (core/phone/
    phone_memory.py). `where` says how the RAM is known ("read from the attached phone")."""
    if device is None or ram <= 0:
        return PhoneMemory("", "")
    try:
        needs = [
            model_need(estimate_model, target, "target"),
            model_need(estimate_model, draft, "draft"),
        ]
    except FileError as exc:
        return PhoneMemory("", f"On {device}: memory not estimated ({exc.path}: {exc.problem}).")
    fit = phone_fit(needs, ram, device)
    text = (
        f"On {device}{LEADS.get(fit.level, '')}: the pair needs "
        f"{needed_words(fit.least, fit.most)} under its own recipes; the phone has "
        f"{format_bytes(ram)} of RAM ({where})."
    )
    return PhoneMemory(fit.level, text, fit.message)


def recorded_ram(device: str) -> int:
    """The phone's RAM as its latest recorded result stored it (0: not stored)."""
    for result in reversed(list_results(device)):
        if result.phone_ram > 0:
            return result.phone_ram
    return 0


ATTACHED = "read from the attached phone"
RECORDED = "stored with its recorded results"


def known_phone_ram(desk: PhoneDesk | None, device: str | None) -> tuple[str | None, int, str]:
    """The phone whose RAM the memory check shows, its RAM and how it is known: the
    chosen profile's phone when attached (adb is asked only when its server already
    runs: the Pair page never starts one) or when its recorded results stored it, else
    an attached phone; (None, 0, "") when no RAM is known."""
    attached = []
    if desk is not None and server_running(desk.adb.port):
        try:
            attached = [d for d in desk.devices() if d.ready and d.model and d.ram_bytes > 0]
        except PhoneError:  # adb went away: the stored figure still holds
            attached = []
    for phone in attached:
        if phone.model == device:
            return device, phone.ram_bytes, ATTACHED
    ram = recorded_ram(device) if device is not None else 0
    if ram:
        return device, ram, RECORDED
    if attached:
        return attached[0].model, attached[0].ram_bytes, ATTACHED
    return None, 0, ""


@dataclass
class MeasureProgress:
    """A measurement of the pair's acceptance under way: prompts and tokens so far."""

    prompts: int
    tokens_per_prompt: int
    pair: str = "the pair"  # its names, said while another pair may be shown
    done_prompts: int = 0
    tokens: int = 0  # of the prompt being decoded

    @property
    def total(self) -> int:
        return self.prompts * self.tokens_per_prompt

    @property
    def done(self) -> int:
        return min(self.total, self.done_prompts * self.tokens_per_prompt + self.tokens)

    def describe(self) -> str:
        prompt = min(self.done_prompts + 1, self.prompts)
        return (
            f"Measuring the acceptance of {self.pair} on this computer: prompt {prompt} of "
            f"{self.prompts}, greedy, draft length {MEASURE_LENGTH}…"
        )
