"""The figures of a bench or of one tune setting, built once, written by one `to_json`.

`PairFigures` is what interleaved plain/speculative runs measured (bench.summarize);
a `BenchSummary` adds the verify agreement and either the bench's facts of the loaded
pair or a sweep's facts of how long the setting was measured. `to_json` gives the
`draftdeck bench --json` object and the summary kept in tune results files, with the
keys in the order they always had, so saved files and their readers stay as they were.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from app.core.infra.typed_json import to_json
from app.core.measure.verify_agreement import VerifyAgreement


@dataclass(frozen=True)
class PairFigures:
    schema: int
    runs: int
    tokens: int  # the mean speculative run's
    draft_length: int
    baseline_tok_s: float | None
    spec_tok_s: float | None
    uplift: float | None  # the median of pair ratios
    acceptance: float | None
    mean_accepted_length: float | None
    per_position_acceptance: tuple[float | None, ...]
    cost_ratio: float | None
    target_step_ms: float | None
    draft_step_ms: float | None
    verify_ms: float | None  # per round
    predicted_speedup: float | None
    prediction_ratio: float | None
    iid_speedup: float | None
    sampler: str
    checked_acceptance: float | None
    expected_acceptance: float | None
    expected_by_position: tuple[float | None, ...]
    # Sampling is exact in distribution, not token for token: after a rejection the two
    # modes draw differently, so equal outputs are not expected (None).
    lossless: bool | None
    uplift_spread: tuple[float, float] | None
    # The 95 % interval of the median of pair ratios (full range when too few pairs).
    uplift_low: float | None
    uplift_high: float | None
    uplift_interval_level: float | None
    pair_ratios: tuple[float, ...]
    baseline_runs_tok_s: tuple[float, ...]
    spec_runs_tok_s: tuple[float, ...]
    baseline_cv: float | None
    spec_cv: float | None
    shortest_run_seconds: float
    min_run_seconds: float
    warnings: tuple[str, ...]
    # How the speculative runs drafted (DecodeStats.drafting), and adaptive drafting's
    # plain steps, times it stepped aside and why (the latest).
    drafting: str = "fixed"
    aside_rounds: int = 0
    asides: int = 0
    aside_note: str = ""


@dataclass(frozen=True)
class BenchFacts:
    """`draftdeck bench`: what the engine said of the loaded pair, and what was run."""

    BEFORE_AGREEMENT: ClassVar[tuple[str, ...]] = ("cannot_pay", "linear_rollback")

    cannot_pay: str | None
    linear_rollback: bool | None
    lossless_expected: bool
    linear_attention: bool
    target: str
    draft: str
    seed: int | None  # pair i drew with seed + i


@dataclass(frozen=True)
class SweepFacts:
    """A tune setting: how long it was measured and why it stopped."""

    BEFORE_AGREEMENT: ClassVar[tuple[str, ...]] = ()

    cannot_pay: str | None
    repeats: int  # rounds of pairs
    interval_target_met: bool
    target_half_width: float
    seconds: float
    budget_seconds: float
    generations_per_run: int
    first_pass: dict[str, Any] | None = None  # a re-measured leader's first figures
    # Why its figures are no 95 % interval (remeasure.disturbance); None: they are.
    disturbed: str | None = None

    def to_json(self) -> dict[str, Any]:
        skipped = ("first_pass", "disturbed")
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skipped}
        if self.first_pass is not None:
            out.update(remeasured=True, first_pass=dict(self.first_pass))
        if self.disturbed is not None:
            out["disturbed"] = self.disturbed
        return out


@dataclass(frozen=True)
class BenchSummary:
    figures: PairFigures
    agreement: VerifyAgreement
    facts: BenchFacts | SweepFacts

    def to_json(self) -> dict[str, Any]:
        facts: dict[str, Any] = to_json(self.facts)
        head = {key: facts.pop(key) for key in self.facts.BEFORE_AGREEMENT}
        agreement = self.agreement.summary_keys(self.figures.acceptance)
        return {**to_json(self.figures), **head, **agreement, **facts}
