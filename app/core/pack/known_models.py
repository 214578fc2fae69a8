"""Recognise well-known models from their shape (resources/known_models.json).

Packs key their per-target advice by model (`qwen3_8b` in runtime_config.json), but a
bundle does not say which model it is; its family, hidden size and layer count do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from app.core.infra.resources import read_text

if TYPE_CHECKING:  # bundle.py asks identify_shape() for a model's trained window
    from app.core.pack.bundle import BundleInfo


@dataclass(frozen=True)
class KnownModel:
    key: str
    name: str
    family: str
    hidden_size: int
    layers: int
    aliases: tuple[str, ...] = ()
    max_positions: int | None = None  # the published config's max_position_embeddings
    repo: str | None = None  # its Hugging Face repository (a made pack's base_model)
    license: str | None = None  # its license, as the Hub's card header spells it

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
            max_positions=m.get("max_positions"),
            repo=m.get("repo"),
            license=m.get("license"),
        )
        for m in data["models"]
    )


def identify(info: BundleInfo) -> KnownModel | None:
    return identify_shape(info.model_type, info.hidden_size, info.layers)


def identify_shape(family: str, hidden_size: int, layers: int) -> KnownModel | None:
    for model in known_models():
        if (model.family, model.hidden_size, model.layers) == (family, hidden_size, layers):
            return model
    return None
