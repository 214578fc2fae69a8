"""A phone forecast: plain and speculative tok/s on a phone for draft lengths 1-6.

From the acceptance by position measured on this computer (pair_acceptance.py: it
carries over, being the models' and the text's) and a phone profile (phone_profiles.py:
what a target step, a draft step and a verify cost there). The model and its fit are in
phone_model.py. Each assumption is said in words in `assumptions`, to be shown wherever
the forecast is.

The interval is a Monte Carlo over both uncertainties, with a fixed seed (the same
inputs give the same interval): each draw takes every position's acceptance from its
Beta posterior (Beta(1 + accepted, 1 + rejected)), moves every phone figure by its
margin (normal, the margin being 1.96 standard deviations), refits the steps and
computes the uplift at each length; low and high are the draws' 2.5th and 97.5th
percentiles.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.infra.units import format_bytes
from app.core.measure import phone_profiles, phone_results
from app.core.measure.pair_acceptance import PositionTallies, pair_key, read_tallies
from app.core.measure.phone_model import (
    CARD_ACCEPTANCE,
    MAX_DRAFT_LENGTH,
    FitPoint,
    PhoneProfile,
    StepFit,
    expected_tokens,
    fit_steps,
)
from app.core.pack.weight_bytes import bytes_per_token

DRAWS = 1000
SEED = 20261206
CLOSE_SHARE = 0.2  # a length that is the best in this share of draws is within noise


@dataclass(frozen=True)
class ForecastRow:
    draft_length: int
    plain_tok_s: float
    spec_tok_s: float
    uplift: float  # spec/plain - 1 (0.30 means +30 %)
    uplift_low: float
    uplift_high: float

    def to_json(self) -> dict[str, Any]:
        return {
            "draft_length": self.draft_length,
            "plain_tok_s": self.plain_tok_s,
            "spec_tok_s": self.spec_tok_s,
            "uplift": self.uplift,
            "uplift_low": self.uplift_low,
            "uplift_high": self.uplift_high,
        }


@dataclass(frozen=True)
class PhoneForecast:
    device: str  # the phone profile's name
    rows: tuple[ForecastRow, ...]  # draft lengths 1..6
    best_draft_length: int
    assumptions: tuple[str, ...]  # each assumption in words; show them with the forecast
    close_lengths: tuple[int, ...] = ()  # lengths within noise of the best (with it)

    def row(self, d: int) -> ForecastRow:
        for r in self.rows:
            if r.draft_length == d:
                return r
        raise KeyError(f"no forecast for draft length {d}")

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "forecast": [r.to_json() for r in self.rows],
            "best_draft_length": self.best_draft_length,
            "close_lengths": list(self.close_lengths),
            "assumptions": list(self.assumptions),
        }


@dataclass(frozen=True)
class NoForecast:
    reason: str  # in words: why there is no forecast, and what would give one


@dataclass(frozen=True)
class PairSizes:
    """The forecast pair: its identity and the bytes of weights each model reads per
    token (None: not known, no scaling)."""

    key: str | None
    target_bytes: int | None
    draft_bytes: int | None
    target_name: str = "this target"
    draft_name: str = "this draft"
    unknown_bytes: bool = False  # the sizes were not known: the profile's own are taken


def _scale(mine: int | None, theirs: int | None) -> float:
    return mine / theirs if mine and theirs else 1.0


def _points(
    profile: PhoneProfile, pair: PairSizes, rates: Sequence[float], noise: list[float] | None
) -> list[FitPoint]:
    """The profile's results as fit points; `noise` moves each figure (two per result)."""
    points = []
    tokens: dict[tuple[int, int], float] = {}  # E_d by (whose rates, d): computed once
    for i, r in enumerate(profile.results):
        own = (
            rates
            if pair.key is not None and r.pair == pair.key
            else (r.rates or (CARD_ACCEPTANCE,))
        )
        key = (id(own), r.draft_length)
        if key not in tokens:
            tokens[key] = expected_tokens(own, r.draft_length)
        plain, spec = r.plain_tok_s, r.spec_tok_s
        if noise is not None:
            plain, spec = plain * noise[2 * i], spec * noise[2 * i + 1]
        points.append(
            FitPoint(
                plain,
                spec,
                r.draft_length,
                tokens[key],
                _scale(pair.target_bytes, r.target_bytes),
                _scale(pair.draft_bytes, r.draft_bytes),
            )
        )
    return points


def _uplifts(fit: StepFit, rates: Sequence[float]) -> list[float]:
    return [
        expected_tokens(rates, d) * fit.target_step / fit.round_seconds(d) - 1.0
        for d in range(1, MAX_DRAFT_LENGTH + 1)
    ]


def _draw_rates(rng: random.Random, tallies: PositionTallies) -> list[float]:
    out = []
    for a, r in zip(tallies.accepted, tallies.reached, strict=True):
        if r <= 0:
            break
        out.append(rng.betavariate(1 + a, 1 + r - a))
    return out


def _margin(profile: PhoneProfile, fit: StepFit) -> float:
    return max(profile.margin, 1.96 * fit.spread) if profile.recorded else profile.margin


def forecast(
    profile: PhoneProfile, pair: PairSizes, tallies: PositionTallies
) -> PhoneForecast | NoForecast:
    """The forecast for a pair whose acceptance is `tallies`, on `profile`'s phone."""
    rates = tallies.rates
    if not rates:
        return NoForecast("No draft position was checked for this pair yet.")
    if not profile.results:
        return NoForecast(f"{profile.name} has no results to forecast from.")
    first = profile.results[0]
    if pair.target_bytes is None or pair.draft_bytes is None:
        # Unknown sizes: the pair is taken for the profile's own first models.
        pair = replace(
            pair,
            target_bytes=pair.target_bytes or first.target_bytes,
            draft_bytes=pair.draft_bytes or first.draft_bytes,
            unknown_bytes=True,
        )
    fit = fit_steps(_points(profile, pair, rates, None))
    uplifts = _uplifts(fit, rates)
    sigma = _margin(profile, fit) / 1.96
    rng = random.Random(SEED)
    draws: list[list[float]] = [[] for _ in uplifts]
    wins = [0] * len(uplifts)
    for _ in range(DRAWS):
        drawn = _draw_rates(rng, tallies)
        noise = [max(0.05, 1.0 + rng.gauss(0.0, sigma)) for _ in range(2 * len(profile.results))]
        ups = _uplifts(fit_steps(_points(profile, pair, drawn, noise), spread=False), drawn)
        for i, u in enumerate(ups):
            draws[i].append(u)
        wins[max(range(len(ups)), key=ups.__getitem__)] += 1
    rows = []
    for i, up in enumerate(uplifts):
        d = i + 1
        ordered = sorted(draws[i])
        low, high = ordered[int(0.025 * DRAWS)], ordered[int(0.975 * DRAWS) - 1]
        plain = 1.0 / fit.target_step
        rows.append(ForecastRow(d, plain, plain * (1.0 + up), up, min(low, up), max(high, up)))
    best = max(range(len(uplifts)), key=uplifts.__getitem__) + 1
    close = tuple(sorted({best} | {i + 1 for i, w in enumerate(wins) if w >= CLOSE_SHARE * DRAWS}))
    words = _assumptions(profile, pair, tallies, fit, _margin(profile, fit), best, close, rows)
    return PhoneForecast(profile.name, tuple(rows), best, words, close)


def _assumptions(
    profile: PhoneProfile,
    pair: PairSizes,
    tallies: PositionTallies,
    fit: StepFit,
    margin: float,
    best: int,
    close: tuple[int, ...],
    rows: list[ForecastRow],
) -> tuple[str, ...]:
    rates = tallies.rates
    shown = ", ".join(f"{p:.2f}" for p in rates)
    words = [
        f"Acceptance by draft position ({shown}) was measured on this computer by greedy "
        f"decoding ({tallies.tokens} tokens) and is taken to hold on the phone: it is a "
        "property of the two models and the text, not of the device.",
    ]
    if len(rates) < MAX_DRAFT_LENGTH:
        words.append(
            f"Draft positions beyond the {len(rates)} measured take the last measured "
            f"rate ({rates[-1]:.2f})."
        )
    if not tallies.exact:
        words.append(
            'The acceptance was measured with memory "low", where the target\'s verify of '
            "d + 1 tokens may differ slightly from its single steps: it may read lower "
            "than on the phone's engine."
        )
    words.append(f"The phone's figures: {profile.source}.")
    mine = [r for r in profile.results if pair.key is None or r.pair != pair.key]
    if any(r.rates is None for r in mine):
        words.append(
            "The acceptance of the published run (or of a recorded result's pair with no "
            f"acceptance measured here) is not known: {CARD_ACCEPTANCE} (the 20k draft "
            "card's training acceptance) is taken, the same at every position."
        )
    if fit.base_fitted:
        words.append(
            "Results at two draft lengths or more fix what a round costs besides its "
            f"drafted tokens: {fit.verify_base:.2f} target steps (1 would be a verify of "
            "one token costing one plain step)."
        )
    else:
        words.append(
            "Results at one draft length cannot show what a round costs besides its drafted "
            "tokens: a verify of one token is taken to cost one plain step."
        )
    if fit.split:
        words.append(
            "The results tell the draft step from the verify (their drafts and targets "
            f"differ in size): a draft step costs {_ms(fit.draft_step)} and each "
            f"more verified token {fit.verify_slope * 100:.0f} % of a target step."
        )
    else:
        words.append(
            "Each more verified token is taken to cost nothing (decoding on phones is "
            "memory-bound: a verify of d + 1 tokens costs about one step). Results of one "
            "pair fix only the cost of each drafted "
            f"token, a draft step plus its share of the verify "
            f"({_ms(fit.per_drafted_token)}, "
            f"{fit.per_drafted_token / fit.target_step:.2f} target steps); for the same "
            "pair the split changes nothing."
        )
    scaled = [
        r
        for r in mine
        if (pair.target_bytes and r.target_bytes and pair.target_bytes != r.target_bytes)
        or (pair.draft_bytes and r.draft_bytes and pair.draft_bytes != r.draft_bytes)
    ]
    if scaled:
        r = scaled[0]
        words.append(
            "Other models than the ones measured on the phone: steps are scaled by the "
            "bytes of weights read per token (decoding on phones is memory-bound; 4-bit "
            f"against 8-bit matters): {pair.target_name} {_gb(pair.target_bytes)} against "
            f"{_gb(r.target_bytes)}, {pair.draft_name} {_gb(pair.draft_bytes)} against "
            f"{_gb(r.draft_bytes)}."
        )
    if mine and pair.unknown_bytes:
        words.append(
            "The bytes this pair's models read per token are not known: they are taken "
            f"to be those of the phone's figures' models ({profile.target_name}, "
            f"{profile.draft_name})."
        )
    words.append(
        f"The interval (95 %) joins the acceptance counts' uncertainty with ±{margin * 100:.0f} % "
        "on each phone figure"
        + (" (the recorded results' spread, at least 5 %)" if profile.recorded else "")
        + "."
    )
    if len(close) > 1:
        others = ", ".join(str(d) for d in close)
        words.append(f"Draft lengths {others} are within noise of each other.")
    if rows[best - 1].uplift <= 0:
        words.append("Speculation is not forecast to pay on this phone at any length.")
    return tuple(words)


def _ms(seconds: float) -> str:
    # A tiny model's step is microseconds: a fixed "0.0 ms" would say nothing.
    return f"{seconds * 1000:.3g} ms"


def _gb(n: int | None) -> str:
    return "unknown size" if not n else format_bytes(n)


def pair_forecast(
    target: Path, draft: Path, device: str, tallies: PositionTallies | None = None
) -> PhoneForecast | NoForecast:
    """The forecast for the pair on the phone profile named `device` (phone_profiles)."""
    tallies = tallies or read_tallies(target, draft)
    if tallies is None or not tallies.rates:
        return NoForecast(
            "No acceptance measured yet for this pair on this computer: a greedy "
            "speculative reply in Chat with adaptive drafting off, a Tune sweep, or "
            "`draftdeck forecast` measures it."
        )
    profile = phone_profiles.profile_for(device)
    if profile is None:
        return NoForecast(f"No phone profile named {device!r}.")
    return forecast(profile, pair_sizes(target, draft), tallies)


def pair_sizes(target: Path, draft: Path) -> PairSizes:
    return PairSizes(
        pair_key(target, draft),
        bytes_per_token(target),
        bytes_per_token(draft),
        Path(target).resolve().name,
        Path(draft).resolve().name,
    )


def record_result(
    phone: str,
    target: Path,
    draft: Path,
    plain_tok_s: float,
    spec_tok_s: float,
    draft_length: int,
    date: str | None = None,
) -> phone_results.PhoneResult:
    """Record a phone result, with the forecast made for it just before (from what was
    known of that phone until now; none when nothing was)."""
    phone_results.check_figures(plain_tok_s, spec_tok_s, draft_length)
    made = pair_forecast(target, draft, phone) if phone_profiles.profile_for(phone) else None
    before = None
    if isinstance(made, PhoneForecast) and 1 <= draft_length <= MAX_DRAFT_LENGTH:
        row = made.row(draft_length)
        before = phone_results.RecordedForecast(
            made.device, row.spec_tok_s, row.uplift, row.uplift_low, row.uplift_high
        )
    return phone_results.add_result(
        phone,
        phone_profiles.pack_ref(target),
        phone_profiles.pack_ref(draft),
        plain_tok_s,
        spec_tok_s,
        draft_length,
        before,
        date,
    )
