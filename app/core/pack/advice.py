"""The pack authors' advice in runtime_config.json (TokForge's format): settings they
recommend, notes on why, and per target (by model, `qwen3_8b`, or by family, `qwen3_5`)
whether they support the pair, with the uplift they claim or the reason they do not.

The file is the pack's, so any JSON may be in it: what does not have the expected
shape is read as "says nothing". Keys starting with `_` (TokForge's `_comment`) are
comments; other keys DraftDeck does not know are kept and shown as the pack spells them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.pack.known_models import KnownModel, normalize_key
from app.core.pack.verdict import INFO, WARNING, Reason, Recommendation, describe

# The top-level keys read here; any other (not a `_comment`) is shown as it is.
KNOWN_KEYS = frozenset({"recommended", "compatible_targets", "notes"})


@dataclass(frozen=True)
class TargetAdvice:
    """One `compatible_targets` entry."""

    enabled: bool | None
    uplift: str | None
    reason: str | None


NO_TARGET_ADVICE = TargetAdvice(None, None, None)


@dataclass(frozen=True)
class PackAdvice:
    recommended: Mapping[str, Any]  # setting -> JSON value, as the pack spells both
    targets: Mapping[str, TargetAdvice]  # by target key as the pack spells it, in order
    notes: Mapping[str, str]  # why, by the pack's own key (`thread_num`), in order
    other: Mapping[str, Any]  # top-level keys DraftDeck does not read, as they are


def read_advice(runtime_config: Mapping[str, Any]) -> PackAdvice | None:
    """The advice in a parsed runtime_config.json; None when the pack has none."""
    if not runtime_config:
        return None
    recommended = runtime_config.get("recommended")
    targets = runtime_config.get("compatible_targets")
    return PackAdvice(
        recommended=dict(recommended) if isinstance(recommended, Mapping) else {},
        targets={str(key): _target_advice(entry) for key, entry in targets.items()}
        if isinstance(targets, Mapping)
        else {},
        notes=_notes(runtime_config.get("notes")),
        other={
            str(key): value
            for key, value in runtime_config.items()
            if key not in KNOWN_KEYS and not str(key).startswith("_")
        },
    )


def _notes(notes: object) -> dict[str, str]:
    """A `notes` object of sentences (a list of them is read too, keyed by position);
    a value that is not text is shown in words."""
    if isinstance(notes, list):
        notes = {str(index): note for index, note in enumerate(notes)}
    if not isinstance(notes, Mapping):
        return {}
    return {
        str(key): note if isinstance(note, str) else describe(note)
        for key, note in notes.items()
        if not str(key).startswith("_") and note not in (None, "")
    }


def _target_advice(entry: object) -> TargetAdvice:
    if not isinstance(entry, Mapping):
        return NO_TARGET_ADVICE
    enabled, uplift, reason = (entry.get(k) for k in ("enabled", "uplift", "reason"))
    return TargetAdvice(
        enabled=enabled if isinstance(enabled, bool) else None,
        uplift=str(uplift) if uplift is not None else None,
        reason=str(reason) if reason is not None else None,
    )


def recommendation(
    advice: PackAdvice | None, model: KnownModel | None, target_name: str | None = None
) -> Recommendation | None:
    """The pack's advice matched to the target when it is a known model: its own entry,
    else its family's (TokForge keys Qwen3.5 as `qwen3_5`, for every size). A target
    that is no known model matches an entry keyed by its folder name (`target_name`):
    DraftDeck's measure-pack keys such a target so (`fast-target` as `fast_target`)."""
    if advice is None:
        return None
    key = _target_key(advice, model)
    if key is None and model is None and target_name:
        wanted = normalize_key(target_name)
        key = next((name for name in advice.targets if normalize_key(name) == wanted), None)
    entry = advice.targets[key] if key is not None else NO_TARGET_ADVICE
    return Recommendation(
        target_key=key,
        enabled=entry.enabled,
        uplift=entry.uplift,
        reason=entry.reason,
        settings=dict(advice.recommended),
        notes=dict(advice.notes),
    )


def _target_key(advice: PackAdvice, model: KnownModel | None) -> str | None:
    if model is None:
        return None
    for name in advice.targets:
        if model.matches_key(name):
            return name
    family = normalize_key(model.family)
    return next((name for name in advice.targets if normalize_key(name) == family), None)


def advice_warnings(rec: Recommendation | None, model: KnownModel | None) -> list[Reason]:
    """The pack's authors disable the pack for this target."""
    if rec is None or rec.enabled is not False:
        return []
    return [
        Reason(
            "pack_disabled_for_target",
            WARNING,
            f"The pack's authors disable it for {model.name if model else rec.target_key}: "
            f"{rec.reason or 'no reason given'}.",
            model.name if model else None,
            rec.reason,
        )
    ]


def advice_information(
    advice: PackAdvice | None, rec: Recommendation | None, model: KnownModel | None
) -> list[Reason]:
    """What the pack's authors say for this target, and the settings they recommend."""
    if advice is None or rec is None:
        return []
    reasons: list[Reason] = []
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
        named = sorted(key for key in advice.targets if normalize_key(key))
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
    reasons += [
        Reason("pack_note", INFO, f"The pack's authors note: {note}", None, key)
        for key, note in rec.notes.items()
    ]
    if advice.other:
        reasons.append(
            Reason(
                "pack_other",
                INFO,
                f"The pack's runtime_config.json also says: {describe(dict(advice.other))}.",
                None,
                dict(advice.other),
            )
        )
    return reasons
