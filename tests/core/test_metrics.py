"""Statistics definitions against hand-computed ground truth."""

from __future__ import annotations

import math

import pytest

from app.core.hub.job import JobStatus
from app.core.infra.transfer_stats import SpeedMeter
from app.core.measure.bench import RunPair, summarize
from app.core.measure.metrics import (
    DecodeStats,
    RoundStats,
    break_even_acceptance,
    expected_speedup,
    predicted_speedup,
)


def test_rounds_add_up_by_hand() -> None:
    s = DecodeStats("speculative", 3)
    s.add_first_token(1)
    s.add_round(RoundStats(3, 3, 4, 3, 0.3, 1.0))  # all accepted + bonus
    s.add_round(RoundStats(3, 1, 2, 3, 0.3, 1.0))  # one accepted + correction
    s.add_round(RoundStats(3, 0, 1, 3, 0.3, 1.0))  # none accepted
    s.add_round(RoundStats(3, 2, 1, 3, 0.3, 1.0))  # cut by max_tokens after one token
    s.decode_seconds = 2.0
    assert s.tokens == 1 + 4 + 2 + 1 + 1 == 9
    assert s.accepted == 6 and s.drafted == 12 and s.acceptance == 0.5
    assert s.from_draft == 3 + 1 + 0 + 1 and s.corrections == 1 + 1 + 1 + 1 + 0
    assert s.position_reached == [4, 3, 2] and s.position_accepted == [3, 2, 1]
    assert s.per_position_acceptance == [0.75, 2 / 3, 0.5]
    assert s.mean_accepted_length == 8 / 4
    assert s.tok_s == 4.0  # 8 decoded tokens (the first one is prefill's) in 2 s
    assert DecodeStats.from_json(s.to_json()).to_json() == s.to_json()


def test_prefill_rate_is_the_tokens_run_over_the_prefill_time() -> None:
    s = DecodeStats("plain", 0, prompt_tokens=120)
    assert s.prefill_tok_s is None  # nothing prefilled yet
    s.prefill_fed, s.prefill_seconds = 100, 0.25  # 20 prompt tokens came from the cache
    assert s.prefill_tok_s == 400.0
    assert s.to_json()["prefill_tok_s"] == 400.0
    s.prefill_fed = 0  # the whole prompt was cached: no rate to speak of
    assert s.prefill_tok_s is None


def test_speedup_formulas() -> None:
    # Perfect acceptance with a free draft: d + 1 tokens per target step.
    assert expected_speedup(1.0, 3, 0.0) == 4.0
    # Nothing accepted: one token per round and the draft cost on top.
    assert math.isclose(expected_speedup(0.0, 3, 0.1), 1 / 1.3)
    # d = 2, a = 0.5, free draft: 1 + 0.5 + 0.25 tokens per round.
    assert math.isclose(expected_speedup(0.5, 2, 0.0), 1.75)
    # d = 1, c = 0.5, a = 0.8: (1 + 0.8) / 1.5.
    assert math.isclose(expected_speedup(0.8, 1, 0.5), 1.2)
    # 3 tokens a round, 10 ms per plain step, 5 + 10 ms per round: 30 ms of work in 15 ms.
    assert math.isclose(predicted_speedup(3.0, 0.010, 0.005, 0.010), 2.0)
    assert math.isclose(predicted_speedup(4.0, 0.010, 0.003, 0.012), 0.040 / 0.015)
    # 1.5 tokens a round for 20 ms of work where plain needs 15 ms: slower.
    assert math.isclose(predicted_speedup(1.5, 0.010, 0.008, 0.012), 0.75)


@pytest.mark.parametrize(
    ("d", "c", "truth"),
    [
        (1, 0.5, 0.5),  # (1 + a) / 1.5 > 1  iff  a > 0.5
        (2, 0.25, (math.sqrt(3) - 1) / 2),  # (1 + a + a^2) / 1.5 = 1: a^2 + a - 0.5 = 0
        (1, 0.0, 0.0),  # a free draft pays off with any acceptance at all
        (2, 0.5, (math.sqrt(5) - 1) / 2),  # (1 + a + a^2) / 2 = 1: a^2 + a - 1 = 0
    ],
)
def test_break_even_by_hand(d: int, c: float, truth: float) -> None:
    threshold = break_even_acceptance(d, c)
    assert threshold is not None
    assert threshold == pytest.approx(truth, abs=1e-5)


def test_break_even_never_when_the_draft_costs_a_target_step() -> None:
    assert break_even_acceptance(3, 1.0) is None  # d + 1 tokens for d + 1 steps at best
    assert break_even_acceptance(1, 1.0) is None
    assert break_even_acceptance(2, 0.6) is not None  # 3 tokens for 2.2 steps at best


def _stats(
    mode: str,
    d: int,
    rounds: int,
    tokens: int,
    target_s: float,
    forwards: int,
    draft_s: float = 0.0,
) -> DecodeStats:
    s = DecodeStats(mode, d)
    s.rounds, s.tokens, s.target_seconds, s.target_forwards = rounds, tokens, target_s, forwards
    s.draft_seconds, s.draft_forwards = draft_s, d * rounds
    s.drafted = d * rounds
    s.decode_seconds = target_s + draft_s
    return s


def test_summary_uses_time_per_round_for_stepwise_verify() -> None:
    base = _stats("plain", 0, 100, 100, 1.0, 100)  # 10 ms per target step
    # Step by step: 10 rounds of 3 target forwards each (30 ms per round).
    spec = _stats("speculative", 2, 10, 30, 0.3, 30, draft_s=0.02)
    summary = summarize([RunPair(base, spec, True)])
    assert summary.verify_ms is not None and math.isclose(summary.verify_ms, 30.0)
    assert summary.predicted_speedup is not None
    assert math.isclose(summary.predicted_speedup, 3 * 0.010 / (0.002 + 0.030))


def test_speed_meter_is_the_rate_over_its_window() -> None:
    meter = SpeedMeter(window=3.0)
    assert meter.add(0, now=10.0) == 0.0  # one sample: no rate yet
    assert meter.add(100, now=11.0) == 100.0
    assert meter.add(400, now=12.0) == 200.0  # (400 - 0) / 2 s
    assert meter.add(500, now=14.0) == pytest.approx(400 / 3)  # 10.0 fell out: (500-100)/3
    meter.reset()
    assert meter.add(900, now=20.0) == 0.0


def test_eta_is_what_is_left_over_the_speed() -> None:
    status = JobStatus("me/pack", done_bytes=300, total_bytes=1000, speed=100.0)
    assert status.fraction == 0.3 and status.eta_seconds == 7.0
    assert JobStatus("me/pack", done_bytes=1000, total_bytes=1000, speed=100.0).eta_seconds is None
    assert JobStatus("me/pack", total_bytes=1000).eta_seconds is None  # no speed yet


def test_checked_acceptance_shares_the_expected_acceptances_denominator() -> None:
    # d = 4; round 1 rejects at position 2 (3 checked, 2 accepted), round 2 accepts all.
    stats = DecodeStats(mode="speculative", draft_length=4)
    stats.add_round(RoundStats(4, 2, 3, 4, 0.0, 0.0, 1, (0.9, 0.8, 0.3)))
    stats.add_round(RoundStats(4, 4, 5, 4, 0.0, 0.0, 1, (0.9, 0.9, 0.9, 0.9)))
    assert stats.acceptance == 6 / 8  # every drafted token, checked or not
    assert stats.checked_acceptance == 6 / 7  # what was checked: 3 + 4
    assert stats.expected_acceptance == pytest.approx((0.9 + 0.8 + 0.3 + 3.6) / 7)
