"""Give a pack whose prompt templates mark no turns the chat format its tokenizer implies
(turn_markers.py): its `jinja` key in config.json, saved like any recipe edit (the
shipped original kept, a save elsewhere waited for)."""

from __future__ import annotations

from pathlib import Path

from app.core.pack.turn_markers import KEY, MissingTurnMarkers
from app.core.recipe.files import TARGET_CONFIG, RecipeDocument


def apply_implied_format(pack: Path, bare: MissingTurnMarkers) -> Path | None:
    """Set the implied format in `pack`'s config.json and return that file; None when
    the tokenizer implies no format (nothing is written). Raises a FileError naming
    config.json when it cannot be read or written."""
    if bare.setting is None:
        return None
    path = pack / TARGET_CONFIG
    doc = RecipeDocument.open_or_new(path)
    doc.save({**doc.data, KEY: dict(bare.setting)})
    return path
