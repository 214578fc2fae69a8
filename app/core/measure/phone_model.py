"""The phone model: tokens a round yields, what a round costs, and a fit of the costs.

Leviathan et al.'s model with acceptance by position instead of one rate:
- p_i: the greedy hit rate at draft position i given that every earlier one was
  accepted (pair_acceptance.py). Positions beyond those measured take the last one.
- tokens per round at draft length d: E_d = 1 + sum_{i=1..d} prod_{j<=i} p_j.
- a round costs d draft steps and one verify of d + 1 tokens:
  d * D + V(d + 1), with V(n) = T * (1 + s_v * (n - 1)); T is one plain target step,
  D one draft step, s_v what each more verified token adds (0: memory-bound, a verify
  costs one step, as on phones; on a compute-bound desktop CPU it is well above 0).
- plain tok/s = 1 / T; speculative tok/s = E_d / (d * D + V(d + 1)).

Fitting from results (plain tok/s, speculative tok/s, d as TokForge shows them): T is
the mean of 1 / plain. A result's round then costs E_d / spec = T + d * (D + s_v * T):
each drafted token costs a draft step plus its share of the verify, and results of one
pair at any number of lengths fix only that sum, k = D + s_v * T. Told apart they are
only by results whose draft and target differ in size relative to each other (the draft
step scales with the draft's bytes, the verify with the target's); else s_v = 0 is
taken (the phone's memory-bound verify), which changes nothing for the same pair and is
said for another.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CARD_ACCEPTANCE = 0.7178  # the 20k draft card's training acceptance (alpha)
MAX_DRAFT_LENGTH = 6
# How far apart two results' draft-to-target size ratios must be before D and s_v are
# told apart (closer ratios leave the split to the results' noise).
_SPLIT_RATIO = 1.2


def rates_for(rates: Sequence[float], d: int) -> list[float]:
    """p_1..p_d: the measured ones, then the last measured one repeated."""
    if not rates:
        raise ValueError("no acceptance rates")
    out = list(rates[:d])
    while len(out) < d:
        out.append(rates[-1])
    return [min(max(p, 0.0), 1.0) for p in out]


def expected_tokens(rates: Sequence[float], d: int) -> float:
    """E_d = 1 + sum_{i=1..d} prod_{j<=i} p_j: tokens a round of length d yields."""
    total, run = 1.0, 1.0
    for p in rates_for(rates, d) if d > 0 else []:
        run *= p
        total += run
    return total


def round_seconds(target: float, draft: float, verify_slope: float, d: int) -> float:
    """d draft steps and a verify of d + 1 tokens."""
    return d * draft + target * (1.0 + verify_slope * d)


def spec_tok_s(target: float, draft: float, verify_slope: float, tokens: float, d: int) -> float:
    return tokens / round_seconds(target, draft, verify_slope, d)


@dataclass(frozen=True)
class FitPoint:
    """One result as the fit needs it, its steps already scaled to the forecast pair's
    models (draft_scale: how much slower the forecast's draft steps are than this
    result's; 1 for the same draft)."""

    plain_tok_s: float
    spec_tok_s: float
    draft_length: int
    tokens: float  # E_d for the result's own pair at its length
    target_scale: float = 1.0
    draft_scale: float = 1.0


@dataclass(frozen=True)
class StepFit:
    target_step: float  # T, seconds (the forecast pair's target)
    draft_step: float  # D, seconds (the forecast pair's draft)
    verify_slope: float  # s_v
    split: bool  # D and s_v told apart by the results (else s_v = 0 was taken)
    spread: float  # relative standard deviation of the results about the fit (0: one)

    @property
    def per_drafted_token(self) -> float:
        """k = D + s_v * T: what one more drafted token adds to a round."""
        return self.draft_step + self.verify_slope * self.target_step


def fit_steps(points: Sequence[FitPoint]) -> StepFit:
    """T, D and s_v from results (see the module notes); least squares, D and s_v never
    below 0."""
    if not points:
        raise ValueError("no results to fit")
    target = sum(p.target_scale / p.plain_tok_s for p in points) / len(points)
    # A result's round over its own plain step T_i: d * D_i + d * s_v * T_i, where its
    # draft step D_i is the forecast draft's D / draft_scale.
    ys = [p.tokens / p.spec_tok_s - 1.0 / p.plain_tok_s for p in points]
    a = [p.draft_length / p.draft_scale for p in points]  # times D (the forecast's draft)
    b = [p.draft_length / p.plain_tok_s for p in points]  # times s_v
    ratios = [p.draft_scale / p.target_scale for p in points]
    apart = max(ratios) >= _SPLIT_RATIO * min(ratios)
    draft, slope, split = _least_squares(a, b, ys, apart)
    fit = StepFit(target, draft, slope, split, 0.0)
    return StepFit(target, draft, slope, split, _spread(points, fit))


def _least_squares(
    a: list[float], b: list[float], y: list[float], apart: bool
) -> tuple[float, float, bool]:
    saa = sum(x * x for x in a)
    sbb = sum(x * x for x in b)
    sab = sum(x * z for x, z in zip(a, b, strict=True))
    say = sum(x * z for x, z in zip(a, y, strict=True))
    sby = sum(x * z for x, z in zip(b, y, strict=True))
    only_draft = max(say / saa, 0.0) if saa > 0 else 0.0
    det = saa * sbb - sab * sab
    if not apart or saa <= 0 or sbb <= 0 or det <= 1e-12 * saa * sbb:
        return only_draft, 0.0, False
    draft = (say * sbb - sby * sab) / det
    slope = (saa * sby - sab * say) / det
    if draft >= 0 and slope >= 0:
        return draft, slope, True
    # On the boundary: the better of all-draft and all-verify.
    only_slope = max(sby / sbb, 0.0)
    err_d = sum((yi - only_draft * ai) ** 2 for yi, ai in zip(y, a, strict=True))
    err_s = sum((yi - only_slope * bi) ** 2 for yi, bi in zip(y, b, strict=True))
    return (only_draft, 0.0, True) if err_d <= err_s else (0.0, only_slope, True)


def _spread(points: Sequence[FitPoint], fit: StepFit) -> float:
    """How far the results lie from the fit: the relative standard deviation of their
    plain steps about T, or of their speculative tok/s about the fit's, the larger."""
    if len(points) < 2:
        return 0.0
    steps = [p.target_scale / p.plain_tok_s / fit.target_step - 1.0 for p in points]
    specs = []
    for p in points:
        base = 1.0 / p.plain_tok_s
        own = p.draft_length * fit.draft_step / p.draft_scale + base * (
            1.0 + fit.verify_slope * p.draft_length
        )
        specs.append(p.spec_tok_s / (p.tokens / own) - 1.0)
    n = len(points)
    return max(
        math.sqrt(sum(x * x for x in steps) / (n - 1)), math.sqrt(sum(x * x for x in specs) / n)
    )


@dataclass(frozen=True)
class ProfileResult:
    """One phone result a profile is made of: recorded by the user or published."""

    plain_tok_s: float
    spec_tok_s: float
    draft_length: int
    target_bytes: int | None  # weights its target reads per token (None: not known)
    draft_bytes: int | None
    pair: str | None = None  # pair_acceptance.pair_key of its pair, when it is a pack here
    rates: tuple[float, ...] | None = None  # its pair's acceptance by position, if known
    label: str = ""  # what it is, in words ("Qwen3-8B + KL Qwen3-0.6B, d=3")


@dataclass(frozen=True)
class PhoneProfile:
    name: str  # the device: a phone's adb model name, or a published profile's name
    results: tuple[ProfileResult, ...]
    recorded: bool  # results the user recorded on this phone (else published figures)
    margin: float  # 95 % relative margin of each figure when its spread is not known
    source: str  # where the figures come from, in words (with the date)
    target_name: str = ""  # the models the figures are about, for the assumptions
    draft_name: str = ""
