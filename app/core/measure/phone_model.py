"""The phone model: tokens a round yields, what a round costs, and a fit of the costs.

Leviathan et al.'s model with acceptance by position instead of one rate:
- p_i: the greedy hit rate at draft position i given that every earlier one was
  accepted (pair_acceptance.py). Positions beyond those measured take the last one.
- tokens per round at draft length d: E_d = 1 + sum_{i=1..d} prod_{j<=i} p_j.
- a round costs d draft steps and one verify of d + 1 tokens:
  d * D + V(d + 1), with V(n) = T * (v_0 + s_v * (n - 1)); T is one plain target step,
  D one draft step, s_v what each more verified token adds (0: memory-bound, a verify
  costs one step, as on phones; on a compute-bound desktop CPU it is well above 0) and
  v_0 what a round costs besides its drafted tokens (1: a one-token verify is a plain
  step; more when a round has costs of its own, a verify's setup, the draft catching up).
- plain tok/s = 1 / T; speculative tok/s = E_d / (d * D + V(d + 1)).

Fitting from results (plain tok/s, speculative tok/s, d as TokForge shows them): T is
the mean of 1 / plain. A result's round then costs E_d / spec = T * v_0 + d * (D +
s_v * T): each drafted token costs a draft step plus its share of the verify. Results
of one pair fix only that sum, k = D + s_v * T, and, at two lengths or more, v_0 (the
line's start). D and s_v are told apart only by results whose draft and target differ
in size relative to each other (the draft step scales with the draft's bytes, the
verify with the target's); else s_v = 0 is taken (the phone's memory-bound verify),
which changes nothing for the same pair and is said for another. With results at one
length only, v_0 = 1 is taken.
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


def round_seconds(
    target: float, draft: float, verify_slope: float, d: int, verify_base: float = 1.0
) -> float:
    """d draft steps and a verify of d + 1 tokens."""
    return d * draft + target * (verify_base + verify_slope * d)


def spec_tok_s(
    target: float,
    draft: float,
    verify_slope: float,
    tokens: float,
    d: int,
    verify_base: float = 1.0,
) -> float:
    return tokens / round_seconds(target, draft, verify_slope, d, verify_base)


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
    verify_base: float = 1.0  # v_0: a round's cost beyond its drafted tokens, in T
    base_fitted: bool = False  # v_0 fitted from results at two lengths (else 1 taken)

    @property
    def per_drafted_token(self) -> float:
        """k = D + s_v * T: what one more drafted token adds to a round."""
        return self.draft_step + self.verify_slope * self.target_step

    def round_seconds(self, d: int) -> float:
        return round_seconds(
            self.target_step, self.draft_step, self.verify_slope, d, self.verify_base
        )


def fit_steps(points: Sequence[FitPoint], spread: bool = True) -> StepFit:
    """T, D, s_v and v_0 from results (see the module notes): least squares with every
    fitted cost at least 0 (v_0 at least 1); what the results cannot tell apart is
    taken (s_v = 0, v_0 = 1)."""
    if not points:
        raise ValueError("no results to fit")
    target = sum(p.target_scale / p.plain_tok_s for p in points) / len(points)
    # A result's round over its own plain step T_i: d * D_i + T_i * (o + s_v * d), where
    # its draft step D_i is the forecast draft's D / draft_scale and v_0 = 1 + o.
    ys = [p.tokens / p.spec_tok_s - 1.0 / p.plain_tok_s for p in points]
    columns = [[p.draft_length / p.draft_scale for p in points]]  # times D
    ratios = [p.draft_scale / p.target_scale for p in points]
    split = max(ratios) >= _SPLIT_RATIO * min(ratios)
    if split:
        columns.append([p.draft_length / p.plain_tok_s for p in points])  # times s_v
    base_fitted = len({p.draft_length for p in points}) >= 2
    if base_fitted:
        columns.append([1.0 / p.plain_tok_s for p in points])  # times o
    coef = _nonnegative_least_squares(columns, ys)
    draft = coef[0]
    slope = coef[1] if split else 0.0
    base = 1.0 + (coef[-1] if base_fitted else 0.0)
    fit = StepFit(target, draft, slope, split, 0.0, base, base_fitted)
    if not spread:  # (the forecast's draws need none)
        return fit
    return StepFit(target, draft, slope, split, _spread(points, fit), base, base_fitted)


def _solve(gram: list[list[float]], v: list[float]) -> list[float] | None:
    """The normal equations' solution (at most three unknowns); None when singular."""
    n = len(v)
    m = [row[:] for row in gram]
    v = v[:]
    scale = max((abs(m[i][i]) for i in range(n)), default=0.0)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) <= 1e-12 * scale:
            return None
        m[col], m[pivot], v[col], v[pivot] = m[pivot], m[col], v[pivot], v[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [a - f * b for a, b in zip(m[r], m[col], strict=True)]
                v[r] -= f * v[col]
    return [v[i] / m[i][i] for i in range(n)]


def _nonnegative_least_squares(columns: list[list[float]], y: list[float]) -> list[float]:
    """The least-squares coefficients, all at least 0: the best of every subset of the
    columns whose own solution has no negative coefficient (three columns at most; the
    sums over the results are taken once)."""
    n = len(columns)
    gram = [[sum(a * b for a, b in zip(ci, cj, strict=True)) for cj in columns] for ci in columns]
    v = [sum(a * b for a, b in zip(ci, y, strict=True)) for ci in columns]
    yy = sum(x * x for x in y)
    best: tuple[float, list[float]] | None = None
    for mask in range(1, 2**n):
        used = [i for i in range(n) if mask >> i & 1]
        sol = _solve([[gram[i][j] for j in used] for i in used], [v[i] for i in used])
        if sol is None or min(sol) < 0:
            continue
        coef = [0.0] * n
        for i, c in zip(used, sol, strict=True):
            coef[i] = c
        # |y - X c|^2 = y.y - 2 c.v + c.G.c
        err = (
            yy
            - 2 * sum(c * vi for c, vi in zip(coef, v, strict=True))
            + sum(coef[i] * gram[i][j] * coef[j] for i in range(n) for j in range(n))
        )
        if best is None or err < best[0]:
            best = (err, coef)
    return best[1] if best else [0.0] * n


def _spread(points: Sequence[FitPoint], fit: StepFit) -> float:
    """How far the results lie from the fit: the relative standard deviation of their
    plain steps about T, or of their speculative tok/s about the fit's, the larger."""
    if len(points) < 2:
        return 0.0
    steps = [p.target_scale / p.plain_tok_s / fit.target_step - 1.0 for p in points]
    specs = []
    for p in points:
        own = round_seconds(
            1.0 / p.plain_tok_s,
            fit.draft_step / p.draft_scale,
            fit.verify_slope,
            p.draft_length,
            fit.verify_base,
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
