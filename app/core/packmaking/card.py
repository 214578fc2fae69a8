"""A made pack's model card: README.md with the Hub's YAML header, the measured table
from the pack's runtime_config.json, the recipe, and what was (not) verified.

The header is the Hub's model-card metadata (huggingface_hub's ModelCardData writes it,
so the Hub parses it as its own): license, base_model when known, library mnn, tags
mnn / speculative-decoding, and draft-model for a draft. A card DraftDeck wrote carries
CARD_MARK on its first line after the header, so a later run may replace it and no other.

The card speaks of the pack's role: the one it was exported as (`draftdeck export
--role`, in its mark), else a target when the pack is a target by size (bundle.py), else
a draft (the packs cards are made for).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from huggingface_hub import ModelCardData

from app.core.infra.units import format_bytes
from app.core.pack.advice import PackAdvice, read_advice
from app.core.pack.bundle import BundleInfo
from app.core.pack.files import NOT_PACK_SUFFIXES
from app.core.pack.known_models import identify
from app.core.packmaking.export_mark import recorded_settings
from app.core.packmaking.verify_result import card_section

CARD = "README.md"
CARD_MARK = "<!-- Written by DraftDeck (draftdeck card / measure-pack)."
TAGS = ("mnn", "speculative-decoding", "draft-model")  # a draft's
TARGET_TAGS = ("mnn", "speculative-decoding")
DRAFT, TARGET = "draft", "target"
UNKNOWN_LICENSE = "other"


@dataclass(frozen=True)
class CardFacts:
    """What the card says that the pack's files do not."""

    # None: what DraftDeck's card in the pack says already, else the known base model's
    # (for the license, else "other").
    license: str | None = None
    base_model: str | None = None  # a Hub repo id
    # The export check's result; None: the pack's export_check.json, if any.
    verification: str | None = None


def card_role(info: BundleInfo) -> str:
    """DRAFT or TARGET: what the card says the pack is."""
    recorded = recorded_settings(info.path).get("role")
    if recorded in (DRAFT, TARGET):
        return str(recorded)
    return TARGET if info.role == TARGET else DRAFT


def _earlier_choice(info: BundleInfo) -> dict[str, str]:
    """The license and base model the pack's card says, if DraftDeck wrote it: a
    `draftdeck card --license/--base-model` choice outlives a later measuring."""
    try:
        text = (info.path / CARD).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    if not text.startswith("---\n") or not is_draftdeck_card(text):
        return {}
    header = text[4:].split("\n---\n", 1)[0]
    said = {}
    for line in header.splitlines():  # ModelCardData's YAML: one "key: value" a line
        key, sep, value = line.partition(": ")
        if sep and key in ("license", "base_model") and value.strip():
            said[key] = value.strip().strip("'\"")
    return said


def card_header(info: BundleInfo, facts: CardFacts) -> str:
    model = identify(info)
    earlier = _earlier_choice(info)
    base = facts.base_model or earlier.get("base_model") or (model.repo if model else None)
    license_ = (
        facts.license
        or earlier.get("license")
        or (model.license if model else None)
        or UNKNOWN_LICENSE
    )
    data = ModelCardData(
        license=license_,
        base_model=base,
        library_name="mnn",
        tags=list(TARGET_TAGS if card_role(info) == TARGET else TAGS),
        pipeline_tag="text-generation",
    )
    return f"---\n{data.to_yaml()}\n---\n"


def is_draftdeck_card(text: str) -> bool:
    return CARD_MARK in text.split("\n---\n", 1)[-1][:400]


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _number(value: object, spec: str) -> str:
    return f"{value:{spec}}" if isinstance(value, (int, float)) else "n/a"


def measured_table(runtime_config: Mapping[str, Any]) -> list[str]:
    """One row a target: enabled, uplift with its interval, and the figures under it."""
    advice = read_advice(runtime_config)
    targets = runtime_config.get("compatible_targets")
    if advice is None or not advice.targets or not isinstance(targets, Mapping):
        return ["No targets were measured."]
    lines = [
        "| Target | Enabled | Uplift (as measured) | Acceptance | Draft length | "
        "Plain tok/s | Speculative tok/s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, entry in advice.targets.items():
        raw = targets.get(key)
        figures = raw.get("measured") if isinstance(raw, Mapping) else None
        figures = figures if isinstance(figures, Mapping) else {}
        enabled = {True: "yes", False: "no", None: "not said"}[entry.enabled]
        said = entry.uplift or ""
        if entry.reason:
            said = f"{said}. {entry.reason}" if said else entry.reason
        lines.append(
            f"| {_cell(figures.get('target') or key)} (`{_cell(key)}`) | {enabled} | "
            f"{_cell(said)} | {_number(figures.get('acceptance'), '.2f')} | "
            f"{figures.get('draft_predict_length', 'n/a')} | "
            f"{_number(figures.get('plain_tok_s'), '.1f')} | "
            f"{_number(figures.get('speculative_tok_s'), '.1f')} |"
        )
    return lines


def _json_block(value: object) -> list[str]:
    return ["```json", json.dumps(value, indent=2, ensure_ascii=False), "```"]


def _recipe(advice: PackAdvice | None, draft_recipe: Mapping[str, Any]) -> list[str]:
    """The recipe section's lines: the recommended settings and the draft's recipe, both
    the phone's (`draft_recipe` is the pack's file as it is, never with this computer's
    settings over it: the thread count measured here is not the pack's recipe)."""
    lines: list[str] = []
    if advice is not None and advice.recommended:
        lines += ["Recommended for the phone (runtime_config.json, TokForge's keys):", ""]
        lines += [*_json_block(dict(advice.recommended)), ""]
    if draft_recipe:
        lines += ["The draft's recipe, as a phone reads it (config_cpu.json):", ""]
        lines += [*_json_block(dict(draft_recipe)), ""]
    if lines:
        lines += [
            "The thread count, precision and memory the figures above were measured with "
            "are that computer's, not a phone's: they are not part of the recipe.",
            "",
        ]
    return lines


def card_text(
    info: BundleInfo,
    runtime_config: Mapping[str, Any],
    draft_recipe: Mapping[str, Any],
    facts: CardFacts,
) -> str:
    """The whole README.md."""
    advice = read_advice(runtime_config)
    model = identify(info)
    shape = (
        f"{model.name} shape"
        if model
        else f"{info.model_type}, hidden {info.hidden_size}, {info.layers} layers"
    )
    files = [f for f in info.files if not f.name.endswith(NOT_PACK_SUFFIXES) and f.name != CARD]
    facts_in_words = (
        f"{shape}, {info.quantization}, vocabulary {info.vocab_size or 'unknown'}, "
        f"{format_bytes(info.size_bytes)}"
    )
    target = card_role(info) == TARGET
    lines = [
        f"{CARD_MARK} Remove this line to keep your own edits: DraftDeck then leaves "
        "the file alone. -->",
        "",
        f"# {info.name}",
        "",
        f"A target model for speculative decoding with MNN ({facts_in_words}). It verifies "
        "the tokens a small draft model proposes; the output is its own."
        if target
        else f"A draft model for speculative decoding with MNN ({facts_in_words}). A large "
        "target model verifies the tokens this draft proposes; the output is the target's.",
        "",
    ]
    if not target or (advice is not None and advice.targets):
        lines += ["## Measured", "", *measured_table(runtime_config), ""]
    if advice is not None and advice.notes:
        lines += [f"- {note}" for note in advice.notes.values()] + [""]
    recipe = _recipe(advice, draft_recipe)
    if recipe or not target:
        lines += ["## Recipe", "", *recipe]
    lines += [
        "## Export verification",
        "",
        facts.verification
        or card_section(info.path)
        or "Not run: this export was not compared with its source model, so nothing here "
        "shows that the MNN pack computes what the source model does.",
        "",
        "## Files",
        "",
        *[f"- `{f.name}` ({format_bytes(f.size)})" for f in files],
        "",
    ]
    return card_header(info, facts) + "\n".join(lines)
