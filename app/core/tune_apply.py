"""Write a measured setting into the pair's recipes, through the recipe module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.recipe_file import DRAFT_RECIPE, TARGET_CONFIG, RecipeDocument
from app.core.tune import Setting

Snapshot = dict[Path, dict[str, Any] | None]


def _changes(setting: Setting, target: Path, draft: Path) -> dict[Path, dict[str, Any]]:
    return {
        target / TARGET_CONFIG: setting.target_config(),
        draft / DRAFT_RECIPE: setting.draft_config(),
    }


def apply_setting(setting: Setting, target: Path, draft: Path) -> Snapshot:
    """Save exactly the swept keys; returns the files' previous contents, for undo."""
    before: Snapshot = {}
    for path, values in _changes(setting, target, draft).items():
        doc = RecipeDocument.open_or_new(path)
        before[path] = dict(doc.data) if path.exists() else None
        doc.save({**doc.data, **values})
    return before


def restore(snapshot: Snapshot) -> None:
    """Undo `apply_setting`: put the previous recipes back (atomically, keeping .bak)."""
    for path, data in snapshot.items():
        if data is None:
            path.unlink(missing_ok=True)
        else:
            doc = RecipeDocument.open_or_new(path)
            doc.save(data, overwrite_changes=True)
