"""The phone forecast's math against ground truth: E_d, the fit, the card's own figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies, pair_key
from app.core.measure.phone_forecast import (
    NoForecast,
    PairSizes,
    PhoneForecast,
    forecast,
    pair_forecast,
)
from app.core.measure.phone_model import (
    CARD_ACCEPTANCE,
    FitPoint,
    PhoneProfile,
    ProfileResult,
    expected_tokens,
    fit_steps,
    rates_for,
    round_seconds,
)
from app.core.measure.phone_profiles import published_profiles

CARD = "RedMagic SM8850 (20k draft card, published)"


def iid_tallies(a: float, rounds: int = 100_000, positions: int = 6) -> PositionTallies:
    """Tallies whose every position hits at rate `a` (counts rounded, as measured)."""
    reached, accepted, r = [], [], rounds
    for _ in range(positions):
        hit = round(r * a)
        reached.append(r)
        accepted.append(hit)
        r = hit
    return PositionTallies(tuple(reached), tuple(accepted), True, rounds)


def synthetic(
    t: float,
    dstep: float,
    sv: float,
    rates: list[float],
    d: int,
    dscale: float = 1.0,
    base: float = 1.0,
) -> FitPoint:
    """A result a phone with these exact costs would show (no noise)."""
    e = expected_tokens(rates, d)
    own_draft = dstep / dscale
    return FitPoint(1.0 / t, e / round_seconds(t, own_draft, sv, d, base), d, e, 1.0, dscale)


def test_identical_draft_yields_d_plus_one_tokens_a_round() -> None:
    for d in range(1, 7):
        assert expected_tokens([1.0], d) == d + 1


def test_expected_tokens_is_the_sum_of_running_products() -> None:
    rates = [0.9, 0.5, 0.2]
    assert expected_tokens(rates, 2) == pytest.approx(1 + 0.9 + 0.45)
    # Beyond the measured positions the last one is taken.
    assert expected_tokens(rates, 5) == pytest.approx(1 + 0.9 + 0.45 + 0.09 + 0.018 + 0.0036)
    assert rates_for(rates, 5) == [0.9, 0.5, 0.2, 0.2, 0.2]
    assert expected_tokens([0.0], 4) == 1.0


def test_the_20k_card_gives_back_its_own_30_percent_at_d3() -> None:
    profile = next(p for p in published_profiles() if p.name == CARD)
    made = forecast(profile, PairSizes(None, None, None), iid_tallies(CARD_ACCEPTANCE))
    assert isinstance(made, PhoneForecast)
    row = made.row(3)
    assert row.plain_tok_s == pytest.approx(13.9)
    assert row.spec_tok_s == pytest.approx(18.1, rel=2e-3)  # counts rounded to whole rounds
    assert row.uplift == pytest.approx(18.1 / 13.9 - 1, abs=2e-3)  # +30.2 %
    assert row.uplift_low < row.uplift < row.uplift_high
    assert [r.draft_length for r in made.rows] == [1, 2, 3, 4, 5, 6]
    assert any("20k draft's card" in words for words in made.assumptions)


def test_one_pair_at_two_lengths_recovers_its_step_costs() -> None:
    rates = [0.8, 0.7, 0.6]
    t, dstep = 0.080, 0.012
    fit = fit_steps([synthetic(t, dstep, 0.0, rates, 2), synthetic(t, dstep, 0.0, rates, 3)])
    assert fit.target_step == pytest.approx(t)
    assert fit.draft_step == pytest.approx(dstep)
    assert fit.verify_slope == 0.0
    assert fit.verify_base == pytest.approx(1.0)
    assert fit.spread == pytest.approx(0.0, abs=1e-12)


def test_one_pair_fixes_the_cost_per_drafted_token_whatever_the_split() -> None:
    rates = [0.9, 0.8]
    t, dstep, sv = 0.050, 0.006, 0.15
    fit = fit_steps([synthetic(t, dstep, sv, rates, 2), synthetic(t, dstep, sv, rates, 3)])
    assert not fit.split
    assert fit.per_drafted_token == pytest.approx(dstep + sv * t)
    # ... which is all the same pair's forecast needs: d = 5 comes out right.
    e5 = expected_tokens(rates, 5)
    truth = e5 / round_seconds(t, dstep, sv, 5)
    assert e5 / fit.round_seconds(5) == pytest.approx(truth)


def test_two_lengths_fix_what_a_round_costs_besides_its_drafted_tokens() -> None:
    rates = [0.9, 0.85, 0.8]
    t, dstep, base = 0.004, 0.0011, 1.45  # a desktop: a round has costs of its own
    fit = fit_steps([synthetic(t, dstep, 0.0, rates, d, base=base) for d in (2, 3)])
    assert fit.base_fitted
    assert fit.verify_base == pytest.approx(base)
    assert fit.per_drafted_token == pytest.approx(dstep)
    e4 = expected_tokens(rates, 4)
    assert e4 / fit.round_seconds(4) == pytest.approx(e4 / round_seconds(t, dstep, 0, 4, base))
    # One length cannot show it: a one-token verify is taken to cost one plain step.
    one = fit_steps([synthetic(t, dstep, 0.0, rates, 3, base=base)])
    assert not one.base_fitted and one.verify_base == 1.0


def test_drafts_of_two_sizes_tell_the_draft_step_from_the_verify() -> None:
    rates = [0.75]
    t, dstep, sv = 0.070, 0.010, 0.2
    points = [
        synthetic(t, dstep, sv, rates, 2),
        synthetic(t, dstep, sv, rates, 3),
        synthetic(t, dstep, sv, rates, 3, dscale=0.5),  # a draft twice as big
    ]
    fit = fit_steps(points)
    assert fit.split
    assert fit.target_step == pytest.approx(t)
    assert fit.draft_step == pytest.approx(dstep)
    assert fit.verify_slope == pytest.approx(sv)
    assert fit.verify_base == pytest.approx(1.0, abs=1e-9)


def test_recorded_results_forecast_their_own_uplift_and_others() -> None:
    rates = [0.8, 0.7]
    t, dstep = 0.1, 0.02
    tallies = PositionTallies((10_000, 8_000), (8_000, 5_600), True, 20_000)
    assert list(tallies.rates) == pytest.approx(rates)
    key = "pair"
    results = []
    for d in (2, 3):
        p = synthetic(t, dstep, 0.0, rates, d)
        results.append(ProfileResult(p.plain_tok_s, p.spec_tok_s, d, 10, 1, key))
    profile = PhoneProfile("phone", tuple(results), True, 0.05, "given")
    made = forecast(profile, PairSizes(key, 10, 1), tallies)
    assert isinstance(made, PhoneForecast)
    for d in range(1, 7):
        truth = expected_tokens(rates, d) / round_seconds(t, dstep, 0.0, d) * t - 1
        assert made.row(d).uplift == pytest.approx(truth)
    assert made.best_draft_length == max(range(1, 7), key=lambda d: made.row(d).uplift)


def test_steps_scale_with_the_bytes_read_per_token() -> None:
    profile = next(p for p in published_profiles() if p.name == CARD)
    same = forecast(profile, PairSizes(None, 4_257_000_000, 335_000_000), iid_tallies(0.7))
    half = forecast(profile, PairSizes(None, 2_128_500_000, 335_000_000), iid_tallies(0.7))
    assert isinstance(same, PhoneForecast) and isinstance(half, PhoneForecast)
    # A target half the size steps twice as fast: plain tok/s doubles.
    assert half.row(3).plain_tok_s == pytest.approx(2 * same.row(3).plain_tok_s)
    # ... and its draft costs twice as much relative to it: less uplift.
    assert half.row(3).uplift < same.row(3).uplift
    assert any("bytes of weights read per token" in w for w in half.assumptions)


def test_interval_narrows_with_more_counts() -> None:
    profile = next(p for p in published_profiles() if p.name == CARD)
    few = forecast(profile, PairSizes(None, None, None), iid_tallies(0.7, 40))
    many = forecast(profile, PairSizes(None, None, None), iid_tallies(0.7, 40_000))
    assert isinstance(few, PhoneForecast) and isinstance(many, PhoneForecast)
    width = [f.row(3).uplift_high - f.row(3).uplift_low for f in (few, many)]
    assert width[0] > width[1] > 0


def test_low_precision_tallies_are_said() -> None:
    profile = next(p for p in published_profiles() if p.name == CARD)
    low = PositionTallies((100, 70), (70, 40), False, 300)
    made = forecast(profile, PairSizes(None, None, None), low)
    assert isinstance(made, PhoneForecast)
    assert any('memory "low"' in w for w in made.assumptions)
    assert any("beyond the 2 measured" in w for w in made.assumptions)


def test_pair_forecast_needs_tallies_and_a_known_device(tmp_path: Path) -> None:
    target, draft = tmp_path / "t", tmp_path / "d"
    target.mkdir()
    draft.mkdir()
    none = pair_forecast(target, draft, CARD)
    assert isinstance(none, NoForecast) and "No acceptance measured" in none.reason
    add_position_tallies(target, draft, iid_tallies(0.7, 500))
    unknown = pair_forecast(target, draft, "no such phone")
    assert isinstance(unknown, NoForecast) and "no such phone" in unknown.reason
    made = pair_forecast(target, draft, CARD)
    assert isinstance(made, PhoneForecast)
    assert made.to_json()["best_draft_length"] == made.best_draft_length
    assert set(made.to_json()["forecast"][0]) == {
        "draft_length",
        "plain_tok_s",
        "spec_tok_s",
        "uplift",
        "uplift_low",
        "uplift_high",
    }
    assert pair_key(target, draft).endswith(str(draft.resolve()))


def test_the_same_inputs_give_the_same_interval() -> None:
    profile = next(p for p in published_profiles() if p.name == CARD)
    one = forecast(profile, PairSizes(None, None, None), iid_tallies(0.7, 300))
    two = forecast(profile, PairSizes(None, None, None), iid_tallies(0.7, 300))
    assert one == two


def test_lengths_within_noise_are_said() -> None:
    rates = [0.8]
    t, dstep = 0.1, 0.03
    results = tuple(
        ProfileResult(p.plain_tok_s, p.spec_tok_s, d, 10, 1, "pair")
        for d in (2, 3)
        for p in [synthetic(t, dstep, 0.0, rates, d)]
    )
    profile = PhoneProfile("phone", results, True, 0.05, "given")
    # Few counts: d = 3 and d = 4 (+55 % and +53 %) change places from draw to draw.
    few = forecast(profile, PairSizes("pair", 10, 1), iid_tallies(0.8, 60))
    assert isinstance(few, PhoneForecast)
    assert len(few.close_lengths) > 1 and few.best_draft_length in few.close_lengths
    assert any("within noise" in w for w in few.assumptions)
    # Many counts and a tight margin: one length stands out.
    sure = forecast(
        PhoneProfile("phone", results, False, 0.001, "given"),
        PairSizes("pair", 10, 1),
        iid_tallies(0.8, 1_000_000),
    )
    assert isinstance(sure, PhoneForecast) and sure.close_lengths == (sure.best_draft_length,)


def test_a_bigger_target_gains_more_as_the_pack_says() -> None:
    """runtime_config.json: +24-40 % for Qwen3-8B, +40-70 % for Qwen3-14B: a slower
    target step makes the same draft's steps cheaper relative to it."""
    profile = next(p for p in published_profiles() if p.name.startswith("RedMagic 11 Pro"))
    draft = 335_000_000
    q8 = forecast(profile, PairSizes(None, 4_257_000_000, draft), iid_tallies(CARD_ACCEPTANCE))
    q14 = forecast(profile, PairSizes(None, 7_870_000_000, draft), iid_tallies(CARD_ACCEPTANCE))
    assert isinstance(q8, PhoneForecast) and isinstance(q14, PhoneForecast)
    assert q14.row(3).plain_tok_s == pytest.approx(11.45 * 4_257 / 7_870)
    assert q14.row(3).uplift > q8.row(3).uplift
    assert q8.row(3).uplift == pytest.approx(15.98 / 11.45 - 1, abs=2e-3)


def test_results_of_two_targets_on_one_phone_tell_the_draft_step_apart() -> None:
    docs = next(p for p in published_profiles() if p.name.startswith("SM8850 (TokForge docs"))
    made = forecast(docs, PairSizes(None, 4_257_000_000, 335_000_000), iid_tallies(0.7178))
    assert isinstance(made, PhoneForecast)
    assert any("tell the draft step from the verify" in w for w in made.assumptions)
