"""Summarise interleaved plain / speculative runs into the figures `draftdeck bench` shows.

Uplift is the median of per-pair ratios (each speculative run against the plain run
next to it), so slow drift of a noisy machine cancels out within each pair. Its 95 %
interval (`uplift_low`, `uplift_high`) is the distribution-free order-statistic interval
of app/core/measure/intervals.py; the run-to-run variation of each mode is its coefficient of
variation, and runs whose decoding took less than MIN_RUN_SECONDS get a warning: a
timer's and the OS's jitter is then a large part of what was measured.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

from app.core.measure.bench_summary import PairFigures
from app.core.measure.intervals import MedianInterval, coefficient_of_variation, median_interval
from app.core.measure.metrics import DecodeStats, cost_ratio, expected_speedup, predicted_speedup
from app.core.measure.words import Mode

BENCH_SCHEMA_VERSION = 1
# Below this much decoding a run, scheduling and timer noise dominate the figure.
MIN_RUN_SECONDS = 0.5


@dataclass
class RunPair:
    baseline: DecodeStats
    speculative: DecodeStats
    identical: bool  # the speculative output matched the plain output token for token


# Facts of a run, not counts: the combined run keeps the first's.
RUN_FACTS = ("window_tokens", "max_tokens_asked", "dropped_messages", "drafting")


def combine_runs(runs: list[DecodeStats]) -> DecodeStats:
    """Back-to-back generations of one mode as one run (their counts and times summed),
    so a run can be made long enough to time."""
    if not runs:
        raise ValueError("no runs to combine")
    first = runs[0]
    total = DecodeStats(first.mode, first.draft_length, sampler=first.sampler)
    seeds = {r.seed for r in runs}
    total.seed = first.seed if len(seeds) == 1 else None  # one seed only if all shared it
    for name in RUN_FACTS:
        setattr(total, name, getattr(first, name))
    total.aside_note = next((r.aside_note for r in reversed(runs) if r.aside_note), "")
    for name in DecodeStats.__dataclass_fields__:
        if name in ("mode", "draft_length", "sampler", "seed", "aside_note", *RUN_FACTS):
            continue
        value = getattr(first, name)
        if isinstance(value, list):
            # A run without rounds has no expected-acceptance sums: it adds nothing.
            columns = itertools.zip_longest(*(getattr(r, name) for r in runs), fillvalue=0)
            setattr(total, name, [sum(column) for column in columns])
        else:
            setattr(total, name, sum(getattr(r, name) for r in runs))
    return total


def draws(sampler: str) -> bool:
    """A run's sampler (DecodeStats.sampler) picks at random: describe() starts with
    "greedy" exactly when the pick is deterministic."""
    return not sampler.startswith("greedy")


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(pairs: list[RunPair]) -> PairFigures:
    if not pairs:
        raise ValueError("no runs to summarise")
    base_rates = [p.baseline.tok_s for p in pairs if p.baseline.tok_s]
    spec_rates = [p.speculative.tok_s for p in pairs if p.speculative.tok_s]
    ratios = pair_ratios(pairs)
    d = pairs[0].speculative.draft_length
    total = _speculative_total(pairs, d)
    sampler = pairs[0].speculative.sampler
    steps = _StepTimes.of(pairs)
    acceptance = total.acceptance
    mean_len = total.mean_accepted_length
    c = steps.cost_ratio
    predicted = steps.predicted(mean_len)
    uplift = _median(ratios)
    interval = median_interval(ratios) if ratios else None
    shortest = min(run.decode_seconds for p in pairs for run in (p.baseline, p.speculative))
    return PairFigures(
        schema=BENCH_SCHEMA_VERSION,
        runs=len(pairs),
        tokens=round(statistics.mean(p.speculative.tokens for p in pairs)),
        draft_length=d,
        baseline_tok_s=_median(base_rates),
        spec_tok_s=_median(spec_rates),
        uplift=uplift,
        acceptance=acceptance,
        mean_accepted_length=mean_len,
        per_position_acceptance=tuple(total.per_position_acceptance),
        cost_ratio=c,
        target_step_ms=_ms(steps.target_step),
        draft_step_ms=_ms(steps.draft_step),
        verify_ms=_ms(steps.verify_per_round),
        predicted_speedup=predicted,
        prediction_ratio=uplift / predicted if uplift and predicted else None,
        iid_speedup=expected_speedup(acceptance, d, c) if acceptance is not None and c else None,
        sampler=sampler,
        checked_acceptance=total.checked_acceptance,
        expected_acceptance=total.expected_acceptance,
        expected_by_position=tuple(total.expected_by_position),
        lossless=all(p.identical for p in pairs) if not draws(sampler) else None,
        uplift_spread=(min(ratios), max(ratios)) if ratios else None,
        uplift_low=interval.low if interval else None,
        uplift_high=interval.high if interval else None,
        uplift_interval_level=interval.level if interval else None,
        pair_ratios=tuple(ratios),
        baseline_runs_tok_s=tuple(base_rates),
        spec_runs_tok_s=tuple(spec_rates),
        baseline_cv=coefficient_of_variation(base_rates),
        spec_cv=coefficient_of_variation(spec_rates),
        shortest_run_seconds=shortest,
        min_run_seconds=MIN_RUN_SECONDS,
        warnings=_warnings(shortest, interval, len(ratios)),
        drafting=pairs[0].speculative.drafting,
        aside_rounds=sum(p.speculative.aside_rounds for p in pairs),
        asides=sum(p.speculative.asides for p in pairs),
        aside_note=next(
            (p.speculative.aside_note for p in reversed(pairs) if p.speculative.aside_note), ""
        ),
    )


def pair_ratios(pairs: list[RunPair]) -> list[float]:
    """Each speculative run's speed over the plain run next to it."""
    return [
        p.speculative.tok_s / p.baseline.tok_s
        for p in pairs
        if p.speculative.tok_s and p.baseline.tok_s
    ]


def _speculative_total(pairs: list[RunPair], d: int) -> DecodeStats:
    """All speculative runs as one, so the figures keep DecodeStats' exact definitions."""
    return DecodeStats(
        Mode.SPECULATIVE,
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
        position_expected=[  # empty when greedy: no run has expected-acceptance sums
            sum(column)
            for column in itertools.zip_longest(
                *(p.speculative.position_expected for p in pairs), fillvalue=0.0
            )
        ],
    )


@dataclass(frozen=True)
class _StepTimes:
    """Median seconds of a target step, a draft step, and a round's verify and drafts."""

    target_step: float | None
    draft_step: float | None
    verify_per_round: float | None
    draft_per_round: float | None

    @classmethod
    def of(cls, pairs: list[RunPair]) -> _StepTimes:
        spec = [p.speculative for p in pairs]
        # Per round, not per forward: a step-by-step verify makes several target forwards.
        return cls(
            _median([s for p in pairs if (s := p.baseline.mean_target_seconds)]),
            _median([s for r in spec if (s := r.mean_draft_seconds)]),
            _median([r.target_seconds / r.rounds for r in spec if r.rounds]),
            _median([r.draft_seconds / r.rounds for r in spec if r.rounds]),
        )

    @property
    def cost_ratio(self) -> float | None:
        if self.draft_step and self.target_step:
            return cost_ratio(self.draft_step, self.target_step)
        return None

    def predicted(self, mean_len: float | None) -> float | None:
        if not (mean_len and self.target_step and self.verify_per_round):
            return None
        if self.draft_per_round is None:
            return None
        return predicted_speedup(
            mean_len, self.target_step, self.draft_per_round, self.verify_per_round
        )


def _ms(seconds: float | None) -> float | None:
    return seconds * 1000 if seconds else None


def _warnings(shortest: float, interval: MedianInterval | None, pairs: int) -> tuple[str, ...]:
    warnings = []
    if shortest < MIN_RUN_SECONDS:
        warnings.append(
            f"runs too short to trust: the shortest decoded for {shortest:.3f} s, under "
            f"{MIN_RUN_SECONDS} s; use more tokens"
        )
    if interval is not None and not interval.met_level:
        warnings.append(
            f"too few run pairs ({pairs}) for a 95 % interval: uplift_low/high is "
            f"the full range, which holds the median with {interval.level:.0%} confidence"
        )
    return tuple(warnings)
