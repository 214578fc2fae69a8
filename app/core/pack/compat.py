"""Can this draft serve this target, and should it? Rules over two bundle descriptions.

No MNN loading. Each finding (a `Reason`, verdict.py) has a code, a severity, a sentence
a user understands and the values on both sides. "Can work" (blocking rules) is kept
apart from "recommended" (warnings and the pack's own advice, advice.py).
"""

from __future__ import annotations

from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.units import format_bytes
from app.core.pack.advice import advice_information, advice_warnings, read_advice, recommendation
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.draft_cost import cost_reasons
from app.core.pack.known_models import KnownModel, identify
from app.core.pack.model_family import UNKNOWN
from app.core.pack.tokenizer_info import TokenizerInfo
from app.core.pack.verdict import (
    BLOCKED,
    INFO,
    MEASURED_MNN,
    WARNING,
    Reason,
    Verdict,
    naming_file,
    verdict_of,
)
from app.core.pack.vocabulary import vocabulary_digest


def read_either(folder: Path) -> BundleInfo | FileError:
    """The bundle in `folder`, or the error that says why it cannot be read."""
    try:
        return read_bundle(folder)
    except FileError as exc:
        return exc


def assess_paths(target: Path, draft: Path) -> Verdict:
    """Like `assess`, but a bundle that cannot be read is itself a blocking reason."""
    return assess_either(read_either(target), read_either(draft))


def assess_either(target: BundleInfo | FileError, draft: BundleInfo | FileError) -> Verdict:
    """Assess two bundles, either of which may have failed to read."""
    if isinstance(target, BundleInfo) and isinstance(draft, BundleInfo):
        return assess(target, draft)
    # Each side's evidence: the unreadable file's full path, or that the pack read fine.
    evidence = [str(v.path) if isinstance(v, FileError) else "read fine" for v in (target, draft)]
    reasons = [
        Reason(
            "broken_bundle",
            BLOCKED,
            f"The {side} bundle cannot be read: {naming_file(value.problem, value.path.name)}.",
            *evidence,
        )
        for side, value in (("target", target), ("draft", draft))
        if isinstance(value, FileError)
    ]
    return verdict_of(reasons, None, None)


def assess(target: BundleInfo, draft: BundleInfo) -> Verdict:
    model = identify(target)
    reasons = pairing_reasons(target, draft) + template_reasons(target, draft)
    if not any(reason.severity == BLOCKED for reason in reasons):
        # What a draft step costs is estimated here (draft_cost.py); a caller that
        # knows the measured c puts it in its place (measure/pair_cost.py).
        reasons += _warnings(target, draft) + cost_reasons(target, draft)
    advice = read_advice(draft.runtime_config)
    rec = recommendation(advice, model, target.name)
    reasons += advice_warnings(rec, model)
    reasons += _identified(model)
    reasons += advice_information(advice, rec, model)
    return verdict_of(reasons, rec, model.name if model else None)


def template_reasons(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    """A side whose chat template could not be rendered (chat_format.py `problem`): the
    target's blocks the pair (the engine refuses to chat with it); the draft's only
    means its format cannot be compared, as the engine renders the target's alone."""
    return [
        Reason(
            "chat_template_unrenderable",
            severity,
            f"The {side} pack {info.name}: {info.chat.problem}.{consequence}",
            target.chat.problem,
            draft.chat.problem,
        )
        for side, info, severity, consequence in (
            ("target", target, BLOCKED, " Chats with it are refused."),
            ("draft", draft, WARNING, " Its chat format cannot be compared with the target's."),
        )
        if info.chat.problem is not None
    ]


def pairing_reasons(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    """Whether the draft's tokens mean anything to the target: reasons the pair cannot
    work at all, and what the vocabulary comparison found when it can."""
    reasons: list[Reason] = []
    unknown = [
        side for side, info in (("target", target), ("draft", draft)) if info.vocab_size is None
    ]
    if unknown:
        reasons.append(
            Reason(
                "vocab_unknown",
                WARNING,
                f"The {' and '.join(unknown)} pack's vocabulary size cannot be told from its "
                "files (no tie_embeddings and no embeddings_bf16.bin); only the tokenizers "
                "were compared.",
                target.vocab_size,
                draft.vocab_size,
                "tokens",
            )
        )
    elif target.vocab_size != draft.vocab_size:
        reasons.append(
            Reason(
                "vocab_mismatch",
                BLOCKED,
                "The models have different vocabularies: the draft's token numbers would "
                "mean other words to the target.",
                target.vocab_size,
                draft.vocab_size,
                "tokens",
            )
        )
    if target.model_type != draft.model_type and UNKNOWN not in (
        target.model_type,
        draft.model_type,
    ):
        reasons.append(_family_reason(target, draft))
    if target.linear_attention != draft.linear_attention:
        t_kind, d_kind = (_attention(info) for info in (target, draft))
        reasons.append(
            Reason(
                "attention_mismatch",
                BLOCKED,
                f"The target uses {t_kind} attention and the draft {d_kind} attention: "
                "different architectures (like Qwen3 and Qwen3.5) that cannot be paired.",
                t_kind,
                d_kind,
                "attention",
            )
        )
    if unknown or target.vocab_size == draft.vocab_size:
        reasons += _vocabulary_reasons(target, draft)
    return reasons


def _vocabulary_reasons(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    """The target encodes the text and the draft only ever sees ids, so the pair can work
    exactly when every id means the same text to both, whatever format or era each file
    has (vocabulary.py): two exports of one model rarely share their tokenizer's bytes."""
    t_tok, d_tok = target.tokenizer, draft.tokenizer
    if t_tok.sha256 == d_tok.sha256:
        return []
    try:
        same = vocabulary_digest(target.path / t_tok.file, t_tok) == vocabulary_digest(
            draft.path / d_tok.file, d_tok
        )
    except FileError as exc:
        return [
            Reason(
                "tokenizer_unreadable",
                BLOCKED,
                f"The vocabulary cannot be read: {naming_file(exc.problem, exc.path.name)}.",
                str(exc.path),
                None,
            )
        ]
    words = _told_apart((_file_words(t_tok), t_tok.sha256), (_file_words(d_tok), d_tok.sha256))
    if not same:
        return [
            Reason(
                "vocabulary_differs",
                BLOCKED,
                "The tokenizers give some token ids other text, so the draft's tokens would "
                "mean other words to the target.",
                *words,
            )
        ]
    formats = (
        f"in different formats ({t_tok.file}, {d_tok.file})"
        if t_tok.type != d_tok.type
        else "differently"
    )
    reasons = [
        Reason(
            "tokenizer_same_vocabulary",
            INFO,
            f"The tokenizer files are stored {formats}, but every token id means the same "
            "text in both.",
            *words,
        )
    ]
    # Only the target encodes the prompt and decides where a reply ends, so lists that
    # differ over one vocabulary (eras list them differently) change nothing here.
    for kind, t_ids, d_ids in (
        ("special", t_tok.special_ids, d_tok.special_ids),
        ("stop", t_tok.stop_ids, d_tok.stop_ids),
    ):
        if set(t_ids) != set(d_ids):
            reasons.append(
                Reason(
                    f"{kind}_ids_differ",
                    INFO,
                    f"The tokenizers list different {kind} token ids; the target's apply "
                    "(it encodes the prompt and ends the reply).",
                    sorted(set(t_ids)),
                    sorted(set(d_ids)),
                )
            )
    return reasons


def _attention(info: BundleInfo) -> str:
    return "linear" if info.linear_attention else info.attention


def _family_reason(target: BundleInfo, draft: BundleInfo) -> Reason:
    """Families both packs name that differ block; a family DraftDeck only inferred is
    a guess and never blocks on its own: the vocabulary comparison decides."""
    guessed = [
        side for side, info in (("target", target), ("draft", draft)) if info.family_inferred
    ]
    if not guessed:
        return Reason(
            "family_mismatch",
            BLOCKED,
            _family_message(target, draft),
            target.model_type,
            draft.model_type,
        )
    whose = " and the ".join(f"{side}'s" for side in guessed)
    verb = "are" if len(guessed) == 2 else "is"
    return Reason(
        "family_inferred_differs",
        INFO,
        f"The families differ (target {target.family_words}; draft {draft.family_words}), "
        f"but the {whose} {verb} only inferred, so the families do not decide: the "
        "vocabularies do.",
        target.family_short,
        draft.family_short,
    )


def _family_message(target: BundleInfo, draft: BundleInfo) -> str:
    """Names the families, and the tokenizer or chat template only when they differ:
    a pair can share both and still differ in family."""
    message = (
        f"The models come from different families (target {target.model_type}, draft "
        f"{draft.model_type}); a draft is paired only with a target of its own family."
    )
    differing = []
    if target.tokenizer.sha256 != draft.tokenizer.sha256:
        differing.append("tokenizer files")
    if _prompt_digest(target) != _prompt_digest(draft):
        differing.append("chat templates")
    if differing:
        message += f" Their {' and '.join(differing)} differ too."
    return message


def _prompt_digest(info: BundleInfo) -> str:
    """Chat formats compare by the prompt they render for one conversation: the same
    ChatML spelled as a jinja template or as prompt templates is the same format."""
    return info.chat.prompt_sha256 or info.chat.sha256


def _file_words(tokenizer: TokenizerInfo) -> str:
    """A tokenizer file as a person tells two apart: its name and size (hash prefixes
    only when those agree: alone they told nobody anything)."""
    return f"{tokenizer.file}, {format_bytes(tokenizer.size_bytes)}"


def _template_words(info: BundleInfo) -> str:
    chars = info.chat_template_chars
    return "none" if chars is None else f"{chars:,} characters"


def _told_apart(target: tuple[str, str | None], draft: tuple[str, str | None]) -> tuple[str, str]:
    """Each side's words; when they read the same (same name, size or length, other
    content), with the start of each side's sha256, the one thing that tells them apart."""
    if target[0] != draft[0]:
        return target[0], draft[0]
    (t_words, t_digest), (d_words, d_digest) = target, draft
    return (
        f"{t_words}, sha256 {(t_digest or '')[:8]}…",
        f"{d_words}, sha256 {(d_digest or '')[:8]}…",
    )


def _warnings(target: BundleInfo, draft: BundleInfo) -> list[Reason]:
    found = (
        _family_warning(target, draft),
        _template_warning(target, draft),
        _visual_warning(target, draft),
        _linear_attention_warning(target, draft),
    )
    return [reason for reason in found if reason is not None]


def _family_warning(target: BundleInfo, draft: BundleInfo) -> Reason | None:
    unknown = [
        side for side, info in (("target", target), ("draft", draft)) if info.model_type == UNKNOWN
    ]
    if not unknown:
        return None
    return Reason(
        "family_unknown",
        WARNING,
        f"The {' and '.join(unknown)} pack names no model family and DraftDeck "
        "cannot tell it from the files; only the tokenizers were compared.",
        target.model_type,
        draft.model_type,
    )


def _template_warning(target: BundleInfo, draft: BundleInfo) -> Reason | None:
    if target.chat.problem or draft.chat.problem:
        return None  # said by template_reasons
    if _prompt_digest(target) == _prompt_digest(draft):
        return None
    return Reason(
        "chat_template_differs",
        WARNING,
        "The chat templates differ; the draft was tuned on differently formatted "
        "conversations, which can lower acceptance.",
        *_told_apart(
            (_template_words(target), target.chat_template_sha256),
            (_template_words(draft), draft.chat_template_sha256),
        ),
    )


def _visual_warning(target: BundleInfo, draft: BundleInfo) -> Reason | None:
    if not draft.visual:
        return None
    return Reason(
        "visual_draft",
        WARNING,
        "The draft carries vision parts that text drafting never uses; they only "
        "cost memory and load time.",
        target.visual,
        draft.visual,
    )


def _linear_attention_warning(target: BundleInfo, draft: BundleInfo) -> Reason | None:
    if not (target.linear_attention and draft.linear_attention):
        return None
    return Reason(
        "linear_attention_pair",
        WARNING,
        f"Both models use linear attention. MNN {MEASURED_MNN} cannot roll that "
        "state back: erasing rejected draft tokens leaves them in it, so the only "
        "exact ways re-process the text or verify one token at a time, and "
        "speculation cannot beat plain decoding. The pair runs and its output is "
        "right; Chat starts in plain decoding.",
        target.attention,
        draft.attention,
        "attention",
    )


def _identified(model: KnownModel | None) -> list[Reason]:
    if model is None:
        return []
    return [
        Reason(
            "target_identified", INFO, f"The target's shape matches {model.name}.", model.name, None
        )
    ]
