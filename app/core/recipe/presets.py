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
from app.core.recipe.schema import physical_cores

# runtime_config.json "recommended" keys and where they belong.
PACK_KEYS = {
    "draft_predict_length": ("target", "draft_predict_length"),
    "target_backend": ("target", "backend_type"),
    "thread_num": ("draft", "thread_num"),
    "backend_type": ("draft", "backend_type"),
    "draft_threads": ("draft", "thread_num"),
    "draft_backend": ("draft", "backend_type"),
    "precision": ("draft", "precision"),
    "memory": ("draft", "memory"),
    "power": ("draft", "power"),
}


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    description: str
    target: Mapping[str, Any] = field(default_factory=dict)
    draft: Mapping[str, Any] = field(default_factory=dict)
    this_computer: bool = False  # thread counts capped at the physical cores

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
    """The `recommended` block of the draft pack's runtime_config.json, as a preset."""
    advice = read_advice(draft.runtime_config)
    if advice is None:
        return None
    target = _pack_side(advice.recommended, "target")
    draft_side = _pack_side(advice.recommended, "draft")
    if not target and not draft_side:
        return None
    return Preset(
        "pack",
        f"{draft.name}'s own recommendation",
        "From the pack's runtime_config.json.",
        target,
        draft_side,
    )


def _pack_side(recommended: Mapping[str, Any], side: str) -> Mapping[str, Any]:
    """The recommended settings for one side, under the names its recipe uses."""
    return {
        PACK_KEYS[key][1]: value
        for key, value in recommended.items()
        if key in PACK_KEYS and PACK_KEYS[key][0] == side
    }


def presets_for(draft: BundleInfo | None, cores: int | None = None) -> list[Preset]:
    limit = cores or physical_cores()
    found = [preset.for_cores(limit) for preset in builtin_presets()]
    own = pack_preset(draft) if draft is not None else None
    return [own, *found] if own else found
