"""TokForge's real runtime_config.json (darkmaniac7/TokForge-AccelerationPack-Draft v3),
byte for byte as the pack ships it, and a test pack that carries it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from app.core.pack.bundle import BundleInfo
from app.core.pack.known_models import known_models
from tests.helpers.paths import ROOT

# As the pack ships it, beside the packs' model cards that the catalog quotes.
TOKFORGE_RUNTIME_CONFIG = (
    ROOT / "docs" / "pack-cards" / "darkmaniac7+TokForge-AccelerationPack-Draft.runtime_config.json"
).read_text(encoding="utf-8")
TOKFORGE_NOTES = (
    "2 threads keeps WALT governor on performance cores. 4+ threads spread load and "
    "governor drops to min frequency.",
    "Forces Android performance hint. Critical for draft model speed.",
    "CPU draft avoids GPU memory contention with OpenCL target. OpenCL draft OOMs on 16GB devices.",
    "d=3 is optimal across all tested devices. d=2 too conservative, d=4 wastes draft overhead.",
)


def tokforge_pack(bundle_copy: Callable[..., Path], dest: Path | None = None) -> Path:
    """A copy of the committed noisy Qwen3 draft carrying TokForge's runtime_config.json
    (the bundle around it stays the tiny test model)."""
    pack = bundle_copy("qwen3-draft-noisy", dest or None)
    (pack / "runtime_config.json").write_text(TOKFORGE_RUNTIME_CONFIG, encoding="utf-8")
    return pack


def as_known(info: BundleInfo, key: str) -> BundleInfo:
    """`info` with the shape of the known model `key` (e.g. qwen3_4b), as a real export
    of that model reads: the compatibility rules then identify it. Its files stay
    `info`'s: the cost estimate weighs the weight files, so a target meant to be bigger
    than its draft starts from a bigger pack (fast-target)."""
    model = next(m for m in known_models() if m.key == key)
    return dataclasses.replace(
        info,
        model_type=model.family,
        hidden_size=model.hidden_size,
        layers=model.layers,
        params_estimate=10**10,
    )
