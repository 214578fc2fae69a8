"""Whether a pair may load, and how: every rule the engine applies before MNN is asked,
in one pure function the window, the CLI and the worker all call.

`plan_load` reads nothing but the two bundle descriptions and their recipe files:
the compatibility verdict (a blocked pair is refused), the draft length (the caller's,
else the target recipe's `draft_predict_length`, else MNN's 3; 1 to 16), the memory
the pair needs against what this computer has, the verify length MNN must prepare,
and the context window both caches can hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.measure import ram_estimate
from app.core.measure.words import FailureCode
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.compat import assess
from app.core.pack.context_window import ContextWindow, pair_window
from app.core.pack.verdict import Verdict
from app.core.recipe.files import run_recipes

DEFAULT_DRAFT_LENGTH = 3  # MNN's own default for draft_predict_length
DRAFT_LENGTHS = range(1, 17)


@dataclass(frozen=True)
class Refusal:
    code: str  # a FailureCode (BLOCKED_PAIR, BAD_REQUEST, NOT_ENOUGH_MEMORY) or a FileError's
    message: str
    reasons: tuple[dict[str, Any], ...] = ()  # the verdict's, for a blocked pair


@dataclass(frozen=True)
class LoadPlan:
    target: BundleInfo
    draft: BundleInfo | None
    verdict: Verdict | None  # None without a draft
    draft_length: int  # 0 without a draft
    verify_length: int  # rows of the verify module MNN prepares (0: none)
    target_recipe: dict[str, Any]  # config.json under the caller's keys
    draft_recipe: dict[str, Any]  # what the draft runs with ({} without one)
    memory: ram_estimate.PairMemory
    fit: ram_estimate.MemoryFit
    window: ContextWindow  # what a speculative generation can hold
    target_window: ContextWindow = field(compare=False)  # a plain one (the target alone)


def plan_paths(
    target: Path,
    draft: Path | None,
    target_overrides: Mapping[str, Any] | None = None,
    draft_overrides: Mapping[str, Any] | None = None,
    draft_length: int | None = None,
) -> LoadPlan | Refusal:
    """`plan_load` on the packs in these folders; an unreadable one is a Refusal with
    its file's message and code."""
    try:
        t_info = read_bundle(target)
        d_info = read_bundle(draft) if draft is not None else None
    except FileError as exc:
        return Refusal(exc.code, str(exc))
    return plan_load(t_info, d_info, target_overrides, draft_overrides, draft_length)


def plan_load(
    target: BundleInfo,
    draft: BundleInfo | None,
    target_overrides: Mapping[str, Any] | None = None,
    draft_overrides: Mapping[str, Any] | None = None,
    draft_length: int | None = None,
) -> LoadPlan | Refusal:
    verdict = assess(target, draft) if draft is not None else None
    if verdict is not None and verdict.blocked:
        reasons = tuple(r.to_json() for r in verdict.reasons)
        return Refusal(
            FailureCode.BLOCKED_PAIR, f"This pair cannot work: {verdict.summary()}", reasons
        )
    target_run, draft_run = run_recipes(
        target.path, draft.path if draft else None, target_overrides, draft_overrides
    )
    d_value = (
        target_run.get("draft_predict_length", DEFAULT_DRAFT_LENGTH)
        if draft_length is None  # 0 is a value to refuse, not "use the recipe"
        else draft_length
    )
    if isinstance(d_value, bool) or not isinstance(d_value, int):
        return Refusal(
            FailureCode.BAD_REQUEST, f"draft_predict_length {d_value!r} is not a whole number"
        )
    if d_value not in DRAFT_LENGTHS:
        first, last = DRAFT_LENGTHS[0], DRAFT_LENGTHS[-1]
        return Refusal(
            FailureCode.BAD_REQUEST, f"draft length {d_value} is out of range ({first} to {last})"
        )
    # Refuse what cannot fit before MNN tries (it would swap or be killed).
    memory, fit = ram_estimate.assess_memory(target, draft, target_overrides, draft_overrides)
    if fit.level == ram_estimate.TOO_BIG:
        return Refusal(FailureCode.NOT_ENOUGH_MEMORY, fit.message)
    # mrope targets get a verify module for d+2 rows, never used: MNN 3.6.1 fills one of
    # the three position rows of the verify input whose length the module was made for
    # (text-only bundles), while other lengths get correct positions.
    verify_length = 0 if draft is None else d_value + 2 if target.mrope else d_value + 1
    target_window = target.context.under(target_run)
    draft_window = draft.context.under(draft_run) if draft is not None else None
    return LoadPlan(
        target=target,
        draft=draft,
        verdict=verdict,
        draft_length=d_value if draft is not None else 0,
        verify_length=verify_length,
        target_recipe=target_run,
        draft_recipe=draft_run,
        memory=memory,
        fit=fit,
        window=pair_window(target_window, draft_window),
        target_window=target_window,
    )
