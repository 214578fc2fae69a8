"""What the compatibility rules conclude about a pair: reasons, the pack's advice and
the verdict's level.

A pair with any blocking reason must not run: the engine and every page that starts a
run refuse it with these reasons. A pair that can run but cannot gain (two
linear-attention models on an MNN that cannot roll their state back) gets its own
level, "cannot_pay", between warnings and blocked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.infra.units import format_bytes

# Severities of a reason.
BLOCKED = "blocked"
WARNING = "warning"
INFO = "info"

# Levels of a verdict (BLOCKED is one too).
COMPATIBLE = "compatible"
WARNINGS = "warnings"
# The pair runs and its output is right, but speculation cannot beat plain decoding.
CANNOT_PAY = "cannot_pay"
MEASURED_MNN = "3.6.1"  # the MNN release the cannot-pay rule was measured on
VERDICT_LABELS = {
    COMPATIBLE: "Compatible",
    WARNINGS: "Compatible, with warnings",
    CANNOT_PAY: f"Compatible, but speculation cannot pay on MNN {MEASURED_MNN} "
    "(the linear-attention state cannot be rolled back)",
    BLOCKED: "Blocked",
}
# Warnings that make speculation pointless rather than merely worse.
CANNOT_PAY_CODES = frozenset({"linear_attention_pair"})
# How bench, tune and the engine's load event mark such a pair when the engine's
# probe finds that this MNN cannot roll linear-attention state back.
LINEAR_CANNOT_PAY = "speculation cannot pay on this MNN: linear-attention state"


@dataclass(frozen=True)
class Reason:
    """One finding: a code, a severity, a sentence a user understands and the values
    on both sides (any JSON value, shown by `check --json`), in `unit` when they are
    numbers or words that need one ("tokens", "attention")."""

    code: str
    severity: str
    message: str
    target: Any
    draft: Any
    unit: str = ""

    def shown(self, value: Any) -> str:
        """One side's value in plain words, for a person."""
        return describe(value, self.unit)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "target": self.target,
            "draft": self.draft,
        }


@dataclass(frozen=True)
class Recommendation:
    """What the pack's runtime_config.json says, for this target where it says so."""

    target_key: str | None
    enabled: bool | None
    uplift: str | None
    reason: str | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)  # the pack's why, by its key

    def to_json(self) -> dict[str, Any]:
        return {
            "target_key": self.target_key,
            "enabled": self.enabled,
            "uplift": self.uplift,
            "reason": self.reason,
            "settings": dict(self.settings),
            "notes": dict(self.notes),
        }


@dataclass(frozen=True)
class Verdict:
    level: str
    reasons: tuple[Reason, ...]
    recommendation: Recommendation | None
    target_model: str | None = None

    @property
    def blocked(self) -> bool:
        return self.level == BLOCKED

    @property
    def cannot_pay(self) -> bool:
        return self.level == CANNOT_PAY

    @property
    def label(self) -> str:
        return VERDICT_LABELS[self.level]

    def of(self, severity: str) -> list[Reason]:
        return [r for r in self.reasons if r.severity == severity]

    def summary(self) -> str:
        """One sentence per blocking reason (or warning), for refusals and tooltips."""
        # Why speculation cannot pay comes before lesser warnings.
        shown = self.of(BLOCKED) or sorted(
            self.of(WARNING), key=lambda r: r.code not in CANNOT_PAY_CODES
        )
        return " ".join(r.message for r in shown) or "No problems found."

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.level,
            "reasons": [r.to_json() for r in self.reasons],
            "recommendation": self.recommendation.to_json() if self.recommendation else None,
            "target_model": self.target_model,
        }


def _count(value: int) -> str:
    if abs(value) >= 10**9:
        return f"{value / 10**9:.1f} billion"
    if abs(value) >= 10**6:
        return f"{value / 10**6:.1f} million"
    return f"{value:,}"


LIST_WHOLE = 8  # a list up to this long is shown whole; a longer one starts with
LIST_SHOWN = 6  # this many items and "… (N in all)"


def describe(value: Any, unit: str = "") -> str:
    """A reason's value as a person reads it: no Python reprs, a unit on numbers."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        # Token ids: plain numbers (151,643 read as two), the first few of a long list.
        items = [str(v) if isinstance(v, int) else describe(v) for v in value]
        if len(items) > LIST_WHOLE:
            return f"{', '.join(items[:LIST_SHOWN])}, … ({len(items)} in all)"
        return ", ".join(items) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {describe(v)}" for k, v in value.items()) or "none"
    if isinstance(value, int) and unit.startswith("bytes "):  # "1.2 MB read per token"
        return f"{format_bytes(value)} {unit.removeprefix('bytes ')}"
    text = _count(value) if isinstance(value, int) else str(value)
    return f"{text} {unit}" if unit else text


def naming_file(problem: str, file: str) -> str:
    """A file's problem naming the file once: as the problem says it, else after it."""
    return problem if file in problem else f"{problem} ({file})"


def verdict_of(reasons: list[Reason], rec: Recommendation | None, model: str | None) -> Verdict:
    """The verdict whose level is the worst of `reasons`."""
    if any(r.severity == BLOCKED for r in reasons):
        level = BLOCKED
    elif any(r.code in CANNOT_PAY_CODES for r in reasons):
        level = CANNOT_PAY
    elif any(r.severity == WARNING for r in reasons):
        level = WARNINGS
    else:
        level = COMPATIBLE
    return Verdict(level, tuple(reasons), rec, model)
