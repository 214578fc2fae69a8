"""Can this draft serve this target? Rules over two bundle descriptions; no MNN loading.

Each finding has a code, a severity, a sentence a user understands and the values on
both sides. A pair with any blocking finding must not run: the engine and every page
that starts a run refuse it with these reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.bundle import BundleInfo

BLOCKED = "blocked"
WARNING = "warning"
INFO = "info"


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
    for field, label in (
        ("special_ids", "special"),
        ("stop_ids", "stop"),
        ("prefix_ids", "prefix"),
    ):
        t_ids, d_ids = getattr(t_tok, field), getattr(d_tok, field)
        if sorted(t_ids) != sorted(d_ids):
            reasons.append(
                Reason(
                    f"{label}_ids_mismatch",
                    BLOCKED,
                    f"The tokenizers disagree on the {label} token ids.",
                    list(t_ids),
                    list(d_ids),
                )
            )
    return reasons
