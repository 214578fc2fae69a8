"""Recognise well-known models from their shape (resources/known_models.json).

Packs key their per-target advice by model (`qwen3_8b` in runtime_config.json), but a
bundle does not say which model it is; its family, hidden size and layer count do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

from app.core.infra.resources import read_text
from app.core.pack.bundle import BundleInfo


@dataclass(frozen=True)
class KnownModel:
    key: str
    name: str
    family: str
    hidden_size: int
    layers: int
    aliases: tuple[str, ...] = ()

    def matches_key(self, key: str) -> bool:
        wanted = normalize_key(key)
        return wanted in {normalize_key(k) for k in (self.key, *self.aliases)}


def normalize_key(key: str) -> str:
    """`Qwen3-8B`, `qwen3_8b` and `qwen3.8b` all become `qwen38b`."""
    return re.sub(r"[^a-z0-9]", "", key.lower())


@cache
def known_models() -> tuple[KnownModel, ...]:
    data = json.loads(read_text("known_models.json"))
    return tuple(
        KnownModel(
            key=m["key"],
            name=m["name"],
            family=m["family"],
            hidden_size=int(m["hidden_size"]),
            layers=int(m["layers"]),
            aliases=tuple(m.get("aliases", ())),
        )
        for m in data["models"]
    )


def identify(info: BundleInfo) -> KnownModel | None:
    for model in known_models():
        if (
            model.family == info.model_type
            and model.hidden_size == info.hidden_size
            and model.layers == info.layers
        ):
            return model
    return None
