"""The Tune form's plan following the recipes as they change on disk.

Quick and Thorough fill the form from the recipes as they run (`recipe_defaults`); a
recipe saved afterwards (a preset on the Recipes page, this computer's settings, a file
a command wrote) must move what the form holds at the old value, or Start measures a
setting that no longer runs ("Draft threads 1 to 1" after a preset saved 2). What the
user chose stays: a swept range, or a value other than the recipe's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.core.measure.tune_plan import SweepPlan

# recipe_defaults' keys -> the SweepPlan field that holds its values.
FOLLOWED = {
    "draft_length": "draft_lengths",
    "draft_threads": "draft_threads",
    "draft_precision": "draft_precisions",
    "draft_memory": "draft_memories",
    "target_threads": "target_threads",
}


def follow_recipe(plan: SweepPlan, was: Mapping[str, Any], now: Mapping[str, Any]) -> SweepPlan:
    """`plan` with every field that measures only the recipe's old value (`was`)
    measuring its value `now`; the other fields as they are."""
    changes: dict[str, Any] = {}
    for key, field in FOLLOWED.items():
        old, new = was.get(key), now.get(key)
        if new is not None and old != new and tuple(getattr(plan, field)) == (old,):
            changes[field] = (new,)
    return replace(plan, **changes)
