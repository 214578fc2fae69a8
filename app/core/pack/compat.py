"""Can this draft serve this target, and should it? Rules over two bundle descriptions.

No MNN loading. Each finding has a code, a severity, a sentence a user understands and
the values on both sides. "Can work" (blocking rules) is kept apart from "recommended"
(warnings and the pack's own advice). A pair with any blocking finding must not run:
the engine and every page that starts a run refuse it with these reasons. A pair that
can run but cannot gain (two linear-attention models on an MNN that cannot roll their
state back) gets its own level, "cannot_pay", between warnings and blocked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.known_models import KnownModel, identify, normalize_key

BLOCKED = "blocked"
WARNING = "warning"
INFO = "info"

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
# A draft costs roughly its parameter share of a target step; above this share the
# draft steps eat most of what acceptance saves.
TOO_CLOSE_RATIO = 0.5


@dataclass(frozen=True)
class Reason:
    code: str
    severity: str
    message: str
    target: Any
    draft: Any

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

    def to_json(self) -> dict[str, Any]:
        return {
            "target_key": self.target_key,
            "enabled": self.enabled,
            "uplift": self.uplift,
            "reason": self.reason,
            "settings": dict(self.settings),
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


def _verdict(reasons: list[Reason], rec: Recommendation | None, model: str | None) -> Verdict:
    if any(r.severity == BLOCKED for r in reasons):
        level = BLOCKED
    elif any(r.code in CANNOT_PAY_CODES for r in reasons):
        level = CANNOT_PAY
    elif any(r.severity == WARNING for r in reasons):
        level = WARNINGS
    else:
        level = COMPATIBLE
    return Verdict(level, tuple(reasons), rec, model)


def assess_paths(target: Path, draft: Path) -> Verdict:
    """Like `assess`, but a bundle that cannot be read is itself a blocking reason."""
    sides: list[BundleInfo | FileError] = []
    for path in (target, draft):
        try:
            sides.append(read_bundle(path))
        except FileError as exc:
            sides.append(exc)
    return assess_either(sides[0], sides[1])


def assess_either(target: BundleInfo | FileError, draft: BundleInfo | FileError) -> Verdict:
    """Assess two bundles, either of which may have failed to read."""
    if isinstance(target, BundleInfo) and isinstance(draft, BundleInfo):
        return assess(target, draft)
    reasons = [
        Reason(
            "broken_bundle",
            BLOCKED,
            f"The {side} bundle cannot be read: {value.problem} ({value.path.name}).",
            str(value) if side == "target" else None,
            str(value) if side == "draft" else None,
        )
        for side, value in (("target", target), ("draft", draft))
        if isinstance(value, FileError)
    ]
    return _verdict(reasons, None, None)


def assess(target: BundleInfo, draft: BundleInfo) -> Verdict:
    model = identify(target)
    reasons = blocking_reasons(target, draft)
    if not reasons:
        reasons += _warnings(target, draft)
    rec = recommendation(draft, model)
    if rec is not None and rec.enabled is False:
        reasons.append(
            Reason(
                "pack_disabled_for_target",
                WARNING,
                f"The pack's authors disable it for {model.name if model else rec.target_key}: "
                f"{rec.reason or 'no reason given'}.",
                model.name if model else None,
                rec.reason,
            )
        )
    reasons += _information(target, draft, model, rec)
    return _verdict(reasons, rec, model.name if model else None)


def blocking_reasons(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    """Reasons the pair cannot work at all: the draft's tokens would mean nothing."""
    reasons: list[Reason] = []
    if target.vocab_size != draft.vocab_size:
        reasons.append(
            Reason(
                "vocab_mismatch",
                BLOCKED,
                "The models have different vocabularies: the draft's token numbers would "
                "mean other words to the target.",
                target.vocab_size,
                draft.vocab_size,
            )
        )
    if target.model_type != draft.model_type:
        reasons.append(
            Reason(
                "family_mismatch",
                BLOCKED,
                "The models come from different families; their tokens and chat formats "
                "do not line up.",
                target.model_type,
                draft.model_type,
            )
        )
    if target.linear_attention != draft.linear_attention:
        reasons.append(
            Reason(
                "attention_mismatch",
                BLOCKED,
                "One model uses linear attention and the other full attention; they are "
                "different architectures (for example Qwen3.5 and Qwen3).",
                "linear" if target.linear_attention else target.attention,
                "linear" if draft.linear_attention else draft.attention,
            )
        )
    t_tok, d_tok = target.tokenizer, draft.tokenizer
    if t_tok.type != d_tok.type:
        reasons.append(
            Reason(
                "tokenizer_type_mismatch",
                BLOCKED,
                "The tokenizers are of different kinds, so the same text becomes different tokens.",
                t_tok.type,
                d_tok.type,
            )
        )
    # The tokenizer files' own ids: a stop id that only one pack adds elsewhere (say a
    # generation_config.json) changes where replies end, not how text becomes tokens.
    for kind, attribute in (
        ("special", "special_ids"),
        ("stop", "file_stop_ids"),
        ("prefix", "prefix_ids"),
    ):
        t_ids = getattr(t_tok, attribute)
        d_ids = getattr(d_tok, attribute)
        if sorted(t_ids) != sorted(d_ids):
            reasons.append(
                Reason(
                    f"{kind}_ids_mismatch",
                    BLOCKED,
                    f"The tokenizers disagree on the {kind} token ids.",
                    list(t_ids),
                    list(d_ids),
                )
            )
    return reasons


def _warnings(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    reasons: list[Reason] = []
    if target.tokenizer.sha256 != draft.tokenizer.sha256:
        reasons.append(
            Reason(
                "tokenizer_content_differs",
                WARNING,
                "The tokenizer files differ although their special ids agree; some text may "
                "split into different tokens and lower acceptance.",
                target.tokenizer.sha256[:12],
                draft.tokenizer.sha256[:12],
            )
        )
    if target.chat_template_sha256 != draft.chat_template_sha256:
        reasons.append(
            Reason(
                "chat_template_differs",
                WARNING,
                "The chat templates differ; the draft was tuned on differently formatted "
                "conversations, which can lower acceptance.",
                (target.chat_template_sha256 or "none")[:12],
                (draft.chat_template_sha256 or "none")[:12],
            )
        )
    share = draft.params_estimate / target.params_estimate if target.params_estimate else 1.0
    if share >= 1.0:
        reasons.append(
            Reason(
                "draft_not_smaller",
                WARNING,
                "The draft is not smaller than the target: each draft step costs as much as "
                "a target step, so speculation cannot speed anything up.",
                target.params_estimate,
                draft.params_estimate,
            )
        )
    elif share > TOO_CLOSE_RATIO:
        reasons.append(
            Reason(
                "draft_too_close_in_size",
                WARNING,
                f"The draft is {share:.0%} of the target's size; drafting costs too much "
                "for speculation to pay off.",
                target.params_estimate,
                draft.params_estimate,
            )
        )
    if draft.visual:
        reasons.append(
            Reason(
                "visual_draft",
                WARNING,
                "The draft carries vision parts that text drafting never uses; they only "
                "cost memory and load time.",
                target.visual,
                draft.visual,
            )
        )
    if target.linear_attention and draft.linear_attention:
        reasons.append(
            Reason(
                "linear_attention_pair",
                WARNING,
                f"Both models use linear attention. MNN {MEASURED_MNN} cannot roll that "
                "state back: erasing rejected draft tokens leaves them in it, so the only "
                "exact ways re-process the text or verify one token at a time, and "
                "speculation cannot beat plain decoding. The pair runs and its output is "
                "right; Chat starts in plain decoding.",
                target.attention,
                draft.attention,
            )
        )
    return reasons


def recommendation(draft: BundleInfo, model: KnownModel | None) -> Recommendation | None:
    """The pack's advice from runtime_config.json, matched to the target when known."""
    config = draft.runtime_config
    if not config:
        return None
    recommended = config.get("recommended")
    settings = dict(recommended) if isinstance(recommended, Mapping) else {}
    targets = config.get("compatible_targets")
    entry: Mapping[str, Any] | None = None
    key: str | None = None
    if model is not None and isinstance(targets, Mapping):
        for name, value in targets.items():
            if isinstance(name, str) and model.matches_key(name):
                key = name
                entry = value if isinstance(value, Mapping) else {}
                break
    enabled = entry.get("enabled") if entry is not None else None
    uplift = entry.get("uplift") if entry is not None else None
    reason = entry.get("reason") if entry is not None else None
    return Recommendation(
        target_key=key,
        enabled=enabled if isinstance(enabled, bool) else None,
        uplift=str(uplift) if uplift is not None else None,
        reason=str(reason) if reason is not None else None,
        settings=settings,
    )


def _information(
    target: BundleInfo, draft: BundleInfo, model: KnownModel | None, rec: Recommendation | None
) -> list[Reason]:
    reasons: list[Reason] = []
    if model is not None:
        reasons.append(
            Reason(
                "target_identified",
                INFO,
                f"The target's shape matches {model.name}.",
                model.name,
                None,
            )
        )
    if rec is None:
        return reasons
    if rec.enabled:
        uplift = f", claiming {rec.uplift}" if rec.uplift else ""
        reasons.append(
            Reason(
                "pack_recommends",
                INFO,
                f"The pack's authors support it for this target{uplift}.",
                rec.target_key,
                rec.uplift,
            )
        )
    elif rec.target_key is None:
        named = _named_targets(draft)
        if named:
            reasons.append(
                Reason(
                    "pack_silent_on_target",
                    INFO,
                    "The pack names the targets it was tested with "
                    f"({', '.join(named)}); this target is not one of them.",
                    model.name if model else None,
                    named,
                )
            )
    if rec.settings:
        shown = ", ".join(f"{k} {v}" for k, v in rec.settings.items())
        reasons.append(
            Reason("pack_recipe", INFO, f"The pack recommends: {shown}.", None, dict(rec.settings))
        )
    return reasons


def _named_targets(draft: BundleInfo) -> list[str]:
    targets = draft.runtime_config.get("compatible_targets")
    if not isinstance(targets, Mapping):
        return []
    return sorted(str(k) for k in targets if normalize_key(str(k)))
