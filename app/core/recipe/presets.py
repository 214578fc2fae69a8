"""Recipe presets: data in resources/presets.json plus the pack's own recommendation.

Presets meant for this computer (`"this_computer": true`) never ask for more threads
than it has physical cores; the phone recipe and MNN's defaults stay as published.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from app.core.infra.resources import read_text
from app.core.pack.advice import read_advice
from app.core.pack.bundle import BundleInfo
from app.core.recipe.schema import DRAFT, ERROR, TARGET, physical_cores, validate

# runtime_config.json "recommended" keys and where they belong. TokForge's v3 pack
# spells them draft_thread_num, draft_power and draft_sampler_type; the shorter
# spellings are accepted too.
PACK_KEYS = {
    "draft_predict_length": ("target", "draft_predict_length"),
    "target_backend": ("target", "backend_type"),
    "thread_num": ("draft", "thread_num"),
    "backend_type": ("draft", "backend_type"),
    "draft_thread_num": ("draft", "thread_num"),
    "draft_threads": ("draft", "thread_num"),
    "draft_backend": ("draft", "backend_type"),
    "precision": ("draft", "precision"),
    "memory": ("draft", "memory"),
    "draft_power": ("draft", "power"),
    "power": ("draft", "power"),
    "draft_sampler_type": ("draft", "sampler_type"),
}
NO_FIELD = "no recipe field"


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    description: str
    target: Mapping[str, Any] = field(default_factory=dict)
    draft: Mapping[str, Any] = field(default_factory=dict)
    this_computer: bool = False  # thread counts capped at the physical cores
    notes: tuple[str, ...] = ()  # the pack authors' reasons for their settings
    # The pack's settings left out, by its key: (its value, why not applied).
    unapplied: Mapping[str, tuple[Any, str]] = field(default_factory=dict)

    def for_cores(self, cores: int) -> Preset:
        """This preset with thread counts no higher than `cores` (if it is for here)."""
        if not self.this_computer:
            return self

        def cap(values: Mapping[str, Any]) -> Mapping[str, Any]:
            threads = values.get("thread_num")
            if isinstance(threads, int) and not isinstance(threads, bool) and threads > cores:
                return {**values, "thread_num": cores}
            return dict(values)

        return replace(self, target=cap(self.target), draft=cap(self.draft))


@cache
def builtin_presets() -> tuple[Preset, ...]:
    data = json.loads(read_text("presets.json"))
    return tuple(
        Preset(
            p["key"],
            p["name"],
            p["description"],
            dict(p["target"]),
            dict(p["draft"]),
            bool(p.get("this_computer", False)),
        )
        for p in data["presets"]
    )


def pack_preset(draft: BundleInfo) -> Preset | None:
    """The `recommended` block of the draft pack's runtime_config.json, as a preset, with
    the pack's notes; a setting the recipe cannot take is listed, not applied."""
    advice = read_advice(draft.runtime_config)
    if advice is None:
        return None
    sides: dict[str, dict[str, Any]] = {TARGET: {}, DRAFT: {}}
    unapplied: dict[str, tuple[Any, str]] = {}
    for key, value in advice.recommended.items():
        if key not in PACK_KEYS:
            unapplied[key] = (value, NO_FIELD)
            continue
        side, recipe_key = PACK_KEYS[key]
        errors = [p for p in validate({recipe_key: value}, side) if p.severity == ERROR]
        if errors:
            unapplied[key] = (value, errors[0].message)
        else:
            sides[side][recipe_key] = value
    if not sides[TARGET] and not sides[DRAFT]:
        return None
    return Preset(
        "pack",
        f"{draft.name}'s own recommendation",
        "From the pack's runtime_config.json.",
        sides[TARGET],
        sides[DRAFT],
        notes=tuple(advice.notes.values()),
        unapplied=unapplied,
    )


def presets_for(draft: BundleInfo | None, cores: int | None = None) -> list[Preset]:
    limit = cores or physical_cores()
    found = [preset.for_cores(limit) for preset in builtin_presets()]
    own = pack_preset(draft) if draft is not None else None
    return [own, *found] if own else found
