"""Summarise interleaved plain / speculative runs into the figures `draftdeck bench` shows.

Uplift is the median of per-pair ratios (each speculative run against the plain run
next to it), so slow drift of a noisy machine cancels out within each pair.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from app.core.metrics import DecodeStats, cost_ratio, expected_speedup, predicted_speedup

BENCH_SCHEMA_VERSION = 1


@dataclass
class RunPair:
    baseline: DecodeStats
    speculative: DecodeStats
    identical: bool  # the speculative output matched the plain output token for token


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(pairs: list[RunPair]) -> dict[str, Any]:
    if not pairs:
        raise ValueError("no runs to summarise")
    base_rates = [p.baseline.tok_s for p in pairs if p.baseline.tok_s]
    spec_rates = [p.speculative.tok_s for p in pairs if p.speculative.tok_s]
    ratios = [
        p.speculative.tok_s / p.baseline.tok_s
        for p in pairs
        if p.speculative.tok_s and p.baseline.tok_s
    ]
    d = pairs[0].speculative.draft_length
    # All speculative runs as one, so the figures keep DecodeStats' exact definitions.
    total = DecodeStats(
        "speculative",
        d,
        rounds=sum(p.speculative.rounds for p in pairs),
        drafted=sum(p.speculative.drafted for p in pairs),
        accepted=sum(p.speculative.accepted for p in pairs),
        tokens=sum(p.speculative.tokens for p in pairs),
        first_tokens=sum(p.speculative.first_tokens for p in pairs),
        position_reached=[sum(p.speculative.position_reached[i] for p in pairs) for i in range(d)],
        position_accepted=[
            sum(p.speculative.position_accepted[i] for p in pairs) for i in range(d)
        ],
    )

    target_step = _median([s for p in pairs if (s := p.baseline.mean_target_seconds)])
    draft_step = _median([s for p in pairs if (s := p.speculative.mean_draft_seconds)])
    # Per round, not per forward: a step-by-step verify makes several target forwards.
    verify_per_round = _median(
        [p.speculative.target_seconds / p.speculative.rounds for p in pairs if p.speculative.rounds]
    )
    draft_per_round = _median(
        [p.speculative.draft_seconds / p.speculative.rounds for p in pairs if p.speculative.rounds]
    )
    acceptance = total.acceptance
    mean_len = total.mean_accepted_length
    c = cost_ratio(draft_step, target_step) if draft_step and target_step else None
    predicted = None
    if mean_len and target_step and draft_per_round is not None and verify_per_round:
        predicted = predicted_speedup(mean_len, target_step, draft_per_round, verify_per_round)
    uplift = _median(ratios)
    return {
        "schema": BENCH_SCHEMA_VERSION,
        "runs": len(pairs),
        "tokens": round(statistics.mean(p.speculative.tokens for p in pairs)),
        "draft_length": d,
        "baseline_tok_s": _median(base_rates),
        "spec_tok_s": _median(spec_rates),
        "uplift": uplift,
        "acceptance": acceptance,
        "mean_accepted_length": mean_len,
        "per_position_acceptance": total.per_position_acceptance,
        "cost_ratio": c,
        "target_step_ms": target_step * 1000 if target_step else None,
        "draft_step_ms": draft_step * 1000 if draft_step else None,
        "verify_ms": verify_per_round * 1000 if verify_per_round else None,
        "predicted_speedup": predicted,
        "prediction_ratio": uplift / predicted if uplift and predicted else None,
        "iid_speedup": expected_speedup(acceptance, d, c) if acceptance is not None and c else None,
        "lossless": all(p.identical for p in pairs),
        "uplift_spread": [min(ratios), max(ratios)] if ratios else None,
    }
