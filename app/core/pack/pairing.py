"""Which pair to offer first, which drafts suit a target, and names that tell packs apart.

The first pair is the best one that can run (`best_pair`): a readable target and a
draft that is not blocked with it, ranked by
1. the draft's own advice (runtime_config.json) supporting this target, with the
   larger claimed uplift first: the only acceptance hint a fresh library has;
2. the verdict: compatible, then compatible with warnings, then cannot pay;
3. fewer warnings;
4. the draft's size as a share of the target's, smallest first (a cheaper draft step
   leaves more of each accepted token's saving);
5. the names and then the paths, so the choice never depends on folder order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from app.core.pack.library import PackEntry
from app.core.pack.verdict import (
    BLOCKED,
    CANNOT_PAY,
    COMPATIBLE,
    INFO,
    WARNING,
    WARNINGS,
    Verdict,
)


class Cell(NamedTuple):
    """What ranking and the pair matrix need of a pair's verdict, kept for every pair
    of a library (300 packs make 33,600 pairs): one object of strings and numbers,
    where a Verdict is seven that every garbage collection walks."""

    level: str
    warnings: int  # how many warnings
    uplift: float | None  # the uplift the draft's pack claims for this target, if it does
    uplift_words: str | None  # as the pack says it
    reasons_text: str  # the verdict's label, then a "• " line per warning or block


def cell_of(verdict: Verdict | Cell) -> Cell:
    if isinstance(verdict, Cell):
        return verdict
    rec = verdict.recommendation
    lines = [verdict.label] + [f"• {r.message}" for r in verdict.reasons if r.severity != INFO]
    return Cell(
        verdict.level,
        len(verdict.of(WARNING)),
        _uplift(verdict),
        rec.uplift if rec is not None else None,
        "\n".join(lines),
    )


VerdictLookup = Callable[[PackEntry, PackEntry], Verdict | Cell]
# The roles a pack may play in a pair, by the role its bundle reads as.
TARGET_ROLES = ("target", "either")
DRAFT_ROLES = ("draft", "either")
_LEVEL_RANK = {COMPATIBLE: 0, WARNINGS: 1, CANNOT_PAY: 2}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def role_of(entry: PackEntry) -> str:
    """The pack's role as read (one that cannot be read may be either)."""
    return entry.info.role if entry.info is not None else "either"


def _uplift(verdict: Verdict) -> float | None:
    """The uplift the draft's authors claim for this target, when they support it."""
    rec = verdict.recommendation
    if rec is None or rec.enabled is not True:
        return None
    found = _NUMBER.search(rec.uplift or "")
    return float(found.group()) if found else 0.0


def _rank(
    target: PackEntry, draft: PackEntry, verdict: Verdict | Cell
) -> tuple[bool, float, int, int, float, str, str, str, str]:
    assert target.info is not None and draft.info is not None
    cell = cell_of(verdict)
    uplift = cell.uplift
    share = draft.info.params_estimate / max(target.info.params_estimate, 1)
    return (
        uplift is None,
        -(uplift or 0.0),
        _LEVEL_RANK[cell.level],
        cell.warnings,
        share,
        target.name.lower(),
        draft.name.lower(),
        str(target.path),
        str(draft.path),
    )


def rank_note(target: PackEntry, draft: PackEntry, verdict: Verdict | Cell) -> str:
    """Why a draft stands where it does in `drafts_for`'s order, in the words of the
    ranking: its pack's advice, the verdict, and its size beside the target's."""
    cell = cell_of(verdict)
    if cell.uplift is not None:
        said = f"recommended by its pack ({cell.uplift_words})" if cell.uplift_words else None
        words = said or "recommended by its pack"
    elif cell.level == WARNINGS:
        count = cell.warnings
        words = f"compatible, {count} warning{'s' if count != 1 else ''}"
    elif cell.level == CANNOT_PAY:
        words = "cannot speed up on this MNN"
    else:
        words = "compatible"
    if target.info is None or draft.info is None or not target.info.params_estimate:
        return words
    percent = 100 * draft.info.params_estimate / target.info.params_estimate
    return f"{words}, {percent:.{1 if percent < 10 else 0}f} % of the target's size"


def can_pair(target: PackEntry, draft: PackEntry, verdict: Verdict | Cell) -> bool:
    """Both packs read and the pair is not blocked (the same folder twice never is
    offered: it is no speed-up)."""
    return target.ok and draft.ok and target.path != draft.path and verdict.level != BLOCKED


def best_pair(
    targets: Sequence[PackEntry], drafts: Sequence[PackEntry], verdict: VerdictLookup
) -> tuple[PackEntry, PackEntry] | None:
    """The pair to offer first (see the module's notes), or None when none can run."""
    ranked = (
        (_rank(t, d, v), t, d)
        for t in targets
        for d in drafts
        if can_pair(t, d, v := verdict(t, d))
    )
    best = min(ranked, key=lambda item: item[0], default=None)
    return None if best is None else (best[1], best[2])


def drafts_for(
    target: PackEntry, drafts: Sequence[PackEntry], verdict: VerdictLookup
) -> tuple[list[PackEntry], list[PackEntry]]:
    """The drafts that can serve `target`, best first, and the others in their order."""
    fitting = [
        (_rank(target, d, v), d) for d in drafts if can_pair(target, d, v := verdict(target, d))
    ]
    fitting.sort(key=lambda item: item[0])
    chosen = [d for _, d in fitting]
    paths = {d.path for d in chosen}
    return chosen, [d for d in drafts if d.path not in paths]
