"""What the Tune page says about the chosen pair before a sweep, known from the bundles
alone (the engine's probe decides at Start)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.pack.compat import assess_paths
from app.core.pack.verdict import MEASURED_MNN


@dataclass(frozen=True)
class PairNote:
    text: str  # the line under the title
    blocked: str  # why the pair cannot be tuned at all ("" if it can)
    cannot_pay: bool  # both use linear attention: measured only with "Measure anyway"


def pair_note(target: Path, draft: Path) -> PairNote:
    text = (
        f"Target {target.name} · draft {draft.name}. Settings not swept are measured "
        "as the recipes run them."
    )
    verdict = assess_paths(target, draft)
    if verdict.cannot_pay:
        text += (
            " Both use linear attention: speculation cannot pay on MNN "
            f"{MEASURED_MNN}, so Start measures only if this MNN can roll their state "
            "back, or with Measure anyway."
        )
    return PairNote(text, verdict.summary() if verdict.blocked else "", verdict.cannot_pay)
