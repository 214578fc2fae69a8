"""What a draft step costs beside a target step (c), as the Pair page and `check` say it.

Estimated from the weights' size: a decoding step reads each weight once, so where
memory bandwidth bounds it (phones; larger models on a desktop) the two models' steps
cost as the bytes of weights each reads per token (weight_bytes.py: the files as
stored, bits, blocks and scales included). The parameter count this replaces took an
8-bit target and a 4-bit draft of one model (134.5 M parameters each) for equal costs
("speculation cannot speed anything up") while Tune measured c = 0.52 for them. Once
the pair has run on this computer, the measured c takes the estimate's place
(measure/pair_cost.py), said as measured here: small models on a desktop pay more per
step than their bytes say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.pack.bundle import BundleInfo
from app.core.pack.verdict import INFO, WARNING, Reason
from app.core.pack.weight_bytes import bytes_per_token

# c at or above: a draft step costs about as much as a target step (at d = 3 with every
# token accepted, a round's 4 tokens cost 1 + 3c = 3.7 steps: 1.08x at best).
SAME_COST = 0.9
# c above: drafting pays only when nearly every drafted token is accepted (at d = 3 and
# acceptance 0.7, a round's 2.53 tokens cost 1 + 3c steps: no gain from c = 0.51 on).
TOO_CLOSE = 0.5
NOT_SMALLER, TOO_CLOSE_CODE, COST_CODE = (
    "draft_not_smaller",
    "draft_too_close_in_size",
    "draft_cost",
)
COST_CODES = frozenset({NOT_SMALLER, TOO_CLOSE_CODE, COST_CODE})
BYTES_UNIT = "bytes read per token"  # verdict.describe shows them as "1.2 MB read per token"
ESTIMATED = "estimated from the weights' size each model reads per token"


@dataclass(frozen=True)
class DraftCost:
    """c and how it is known: `source` says it ("estimated from …", "measured on this
    computer …"); `target` and `draft` are each side's evidence, in `unit`."""

    ratio: float
    source: str
    target: Any
    draft: Any
    unit: str


def estimated_cost(target: BundleInfo, draft: BundleInfo) -> DraftCost | None:
    """c from the bytes of weights each model reads per token; None when a side's weight
    file cannot be sized."""
    target_bytes, draft_bytes = bytes_per_token(target.path), bytes_per_token(draft.path)
    if not target_bytes or not draft_bytes:
        return None
    return DraftCost(draft_bytes / target_bytes, ESTIMATED, target_bytes, draft_bytes, BYTES_UNIT)


def cost_reason(cost: DraftCost) -> Reason:
    """The finding: a warning when drafting costs too much to pay easily, else what it
    costs (information), each saying whether c was estimated or measured, and where."""
    steps = f"{cost.ratio:.2f} {'target steps' if cost.ratio >= 1 else 'of a target step'}"
    said = f"A draft step costs about {steps} (c, {cost.source})"
    if cost.ratio >= SAME_COST:
        code, severity = NOT_SMALLER, WARNING
        can = "cannot" if cost.ratio >= 1 else "can hardly"
        said += f", so speculation {can} speed anything up."
    elif cost.ratio > TOO_CLOSE:
        code, severity = TOO_CLOSE_CODE, WARNING
        said += ", so speculation pays only when nearly every drafted token is accepted."
    else:
        code, severity = COST_CODE, INFO
        said += "."
    return Reason(code, severity, said, cost.target, cost.draft, cost.unit)


def cost_reasons(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    """The estimate's finding, when the weights can be sized."""
    cost = estimated_cost(target, draft)
    return [] if cost is None else [cost_reason(cost)]
