"""The result of an export check: per memory setting and text, the verdict with what
differs, as JSON beside the pack (export_check.json) and as the model card's section.

The verdict is taken at `memory: normal`, where MNN computes with the weights exactly as
stored: "export faithful" (agreement with the source quantized like the export) must be
at least FAITHFUL_FLOOR there. The recipe's own memory setting is measured and reported
too; `memory: low` quantizes activations at run time and may agree less.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.core.infra.jsonfile import atomic_write_json
from app.core.pack.export_check import ExportVerdict, agreement_text
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.verify_compare import TIE_GAP, TextAgreement
from app.core.packmaking.verify_prompt import PromptCheck

FAITHFUL_FLOOR = 0.99
# The largest logit difference at memory normal, as a share of the largest logit. Good
# exports measured: about 1e-6 to 2e-4 of it (verify_compare.TIE_GAP's figures); a
# tampered weight file: the order of the logits themselves.
LOGIT_TOLERANCE = 0.05
SCHEMA = 1


@dataclass(frozen=True)
class RunCheck:
    """The pack run at one memory setting against the source, over every text."""

    memory: str
    texts: tuple[TextAgreement, ...]
    seconds: float

    def _weighted(self, pick: str) -> float:
        counted = [(t.positions - t.ties, getattr(t, pick)) for t in self.texts]
        total = sum(n for n, _ in counted)
        return sum(n * v for n, v in counted) / total if total else 1.0

    @property
    def faithful(self) -> float:
        return self._weighted("faithful")

    @property
    def cost(self) -> float:
        return self._weighted("cost")

    @property
    def max_abs_diff(self) -> float:
        return max((t.max_abs_diff for t in self.texts), default=0.0)

    @property
    def relative_diff(self) -> float:
        """The largest difference as a share of its text's largest logit."""
        return max((t.max_abs_diff / max(t.scale, 1e-9) for t in self.texts), default=0.0)

    @property
    def non_finite(self) -> int:
        return sum(t.non_finite for t in self.texts)


@dataclass(frozen=True)
class ExportCheck:
    pack: str
    source: str
    quantization: str  # QuantSpec.describe()
    runs: tuple[RunCheck, ...]  # memory normal first
    halved_blocks: dict[str, int]  # layers the exporter quantized at a smaller block
    verified: bool
    reasons: tuple[str, ...]  # what differs, when not verified
    seconds: float
    date: str
    chat_prompt: PromptCheck | None = None  # None: not checked (an unfinished check)

    @property
    def verdict(self) -> ExportVerdict:
        return ExportVerdict.VERIFIED if self.verified else ExportVerdict.NOT_VERIFIED

    def to_json(self) -> dict[str, Any]:
        runs = [
            {
                "memory": r.memory,
                "faithful": r.faithful,
                "quantization_cost": r.cost,
                "max_abs_logit_diff": _finite_or_none(r.max_abs_diff),
                "relative_logit_diff": _finite_or_none(r.relative_diff),
                "non_finite_positions": r.non_finite,
                "seconds": r.seconds,
                "texts": [
                    {**asdict(t), "max_abs_diff": _finite_or_none(t.max_abs_diff)} for t in r.texts
                ],
            }
            for r in self.runs
        ]
        return {
            "schema": SCHEMA,
            "verdict": str(self.verdict),
            "verified": self.verified,
            "floor": FAITHFUL_FLOOR,
            "logit_tolerance": LOGIT_TOLERANCE,
            "tie_gap": TIE_GAP,
            "pack": self.pack,
            "source": self.source,
            "quantization": self.quantization,
            "halved_blocks": self.halved_blocks,
            "reasons": list(self.reasons),
            "runs": runs,
            "chat_prompt": self.chat_prompt.to_json() if self.chat_prompt else None,
            "summary": self.summary(),  # what the model card shows
            "seconds": self.seconds,
            "date": self.date,
        }

    def summary(self) -> list[str]:
        """A few lines for a terminal or the card."""
        lines = [f"{self.verdict.capitalize()} ({self.quantization}), {self.date}."]
        for r in self.runs:
            diff = (
                "non-finite"
                if math.isinf(r.max_abs_diff)
                else f"{r.max_abs_diff:.3g} ({r.relative_diff:.2%} of the largest logit)"
            )
            lines.append(
                f"memory {r.memory}: export faithful {agreement_text(r.faithful)}, "
                f"quantization cost {agreement_text(r.cost)} (top-1 agreement with the "
                "source quantized like the export and as it is), largest logit difference "
                f"{diff}"
            )
        prompt = self.chat_prompt
        if prompt is not None and not prompt.difference:  # a difference is a reason
            lines.append(prompt.summary())
        lines += self.reasons
        return lines


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def verdict_reasons(
    runs: Sequence[RunCheck], halved_blocks: dict[str, int], block: int
) -> tuple[str, ...]:
    """What differs at memory normal (runs[0]); empty when the export is faithful."""
    normal = runs[0]
    close = normal.relative_diff <= LOGIT_TOLERANCE
    if not normal.non_finite and normal.faithful >= FAITHFUL_FLOOR and close:
        return ()
    reasons: list[str] = []
    if normal.non_finite:
        total = sum(t.positions for t in normal.texts)
        reasons.append(
            f"The pack's logits are not finite (or near FLT_MAX) at {normal.non_finite} of "
            f"{total} positions at memory normal."
        )
    if normal.faithful < FAITHFUL_FLOOR:
        reasons.append(
            "Top-1 agreement with the quantized source is "
            f"{agreement_text(normal.faithful)} at memory normal (at least {FAITHFUL_FLOOR} "
            "expected)."
        )
    if not close and not normal.non_finite:
        reasons.append(
            f"The pack's logits differ from the quantized source's by up to "
            f"{normal.max_abs_diff:.3g} at memory normal ({normal.relative_diff:.1%} of the "
            f"largest logit; at most {LOGIT_TOLERANCE:.0%} expected): its weights are not "
            "the source's."
        )
    for t in normal.texts:
        d = t.divergence
        if d is not None:
            reasons.append(
                f"{t.name}: first differs after token {d.position} ({d.context!r}): "
                f"the source predicts {d.expected!r}, the pack {d.got!r}."
            )
    if halved_blocks:
        layer, used = next(iter(halved_blocks.items()))
        reasons.append(
            f"Likely cause: {len(halved_blocks)} layers (e.g. {layer}) have an input width "
            f"that block {block} does not divide; the exporter quantized them at block "
            f"{used} while MNN reads them at block {block}. Export again with a block that "
            "divides every width."
        )
    return tuple(reasons)


CARD_HEAD = (
    "Compared with its source model on fixed texts (prose, code, Chinese, a chat turn), "
    "teacher-forced, position by position, and its chat prompt with the source's, by "
    "`draftdeck verify-export`."
)


def card_section(pack: Path) -> str | None:
    """The model card's "Export verification" text from the pack's export_check.json;
    None when there is none (or it cannot be read: the card then says it was not run)."""
    try:
        data = json.loads((pack / EXPORT_CHECK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    lines = data.get("summary") if isinstance(data, dict) else None
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        return None
    return "\n".join([CARD_HEAD, "", *[f"- {line}" for line in lines]])


# Why a check that did not finish is recorded as not verified (never as if not run).
INTERRUPTED = (
    "Interrupted: the check was stopped before it finished "
    "(`draftdeck verify-export PACK SOURCE` runs it again)."
)
COULD_NOT_RUN = "The check could not run (what stopped it was said as it ran)."


def unfinished_check(pack: Path, source: Path, reason: str) -> ExportCheck:
    """The record of a check of `pack` that did not finish: not verified, saying why."""
    return ExportCheck(
        pack=str(pack),
        source=str(source),
        quantization="not checked",
        runs=(),
        halved_blocks={},
        verified=False,
        reasons=(reason,),
        seconds=0.0,
        date=time.strftime("%Y-%m-%d"),
    )


def save_check(pack: Path, check: ExportCheck) -> Path:
    path = pack / EXPORT_CHECK
    atomic_write_json(path, check.to_json())
    return path
