"""Turning a draft's measurements into its pack files: runtime_config.json (TokForge's
format), the draft recipe as measured (config_cpu.json, by writing.py's rule), and the
model card.

The measuring itself needs the engine (app/engine/client/pack_measure.py); everything
here is plain files, so a test can feed it measurements of its own.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from app import __version__
from app.core.measure.tune_run import host_facts
from app.core.pack.bundle import read_bundle
from app.core.packmaking.card import CARD, CardFacts, card_text
from app.core.packmaking.measured import (
    TargetMeasurement,
    build_runtime_config,
    leading_measurement,
)
from app.core.packmaking.writing import (
    Written,
    refuse_foreign,
    write_card,
    write_draft_recipe,
    write_runtime_config,
)
from app.core.recipe.files import draft_recipe_path, read_recipe


def measured_draft_recipe(lead: TargetMeasurement) -> dict[str, Any]:
    """The draft recipe's keys as measured: the draft's settings in the best setting."""
    best = lead.best
    assert best is not None
    recipe: dict[str, Any] = {
        "backend_type": str(lead.draft_recipe.get("backend_type", "cpu")),
        "thread_num": best.setting.draft_threads,
        "precision": best.setting.draft_precision,
        "memory": best.setting.draft_memory,
        "sampler_type": "greedy",
    }
    if "power" in lead.draft_recipe:
        recipe["power"] = lead.draft_recipe["power"]
    return recipe


def check_before_measuring(draft: Path, force: bool) -> None:
    """Refuse at once (not after minutes of measuring) to replace others' files."""
    refuse_foreign(draft, force)


def write_card_only(draft: Path, facts: CardFacts, force: bool) -> Written:
    """README.md from what the pack holds now (its runtime_config.json and recipe)."""
    refuse_foreign(draft, force, (CARD,))
    done = Written()
    info = read_bundle(draft)
    recipe = read_recipe(draft_recipe_path(draft))
    write_card(draft, card_text(info, info.runtime_config, recipe, facts), force, done)
    return done


def finish_pack(
    draft: Path,
    measurements: list[TargetMeasurement],
    facts: CardFacts,
    force: bool = False,
    host: dict[str, Any] | None = None,
    date: str | None = None,
    force_recipe: bool | None = None,
) -> tuple[Written, dict[str, Any]]:
    """Write the pack's files from its measurements; what was written and the config.
    `force` replaces a runtime_config.json or card DraftDeck did not write; a draft recipe
    DraftDeck did not write gets the measured settings only with `force_recipe` (default:
    as `force`; the window never does, and says it kept the recipe)."""
    refuse_foreign(draft, force)
    config = build_runtime_config(
        measurements,
        host if host is not None else host_facts(),
        date or time.strftime("%Y-%m-%d"),
        __version__,
    )
    done = Written()
    write_runtime_config(draft, config, force, done)
    lead = leading_measurement(measurements)
    if lead is not None:
        recipe_force = force if force_recipe is None else force_recipe
        write_draft_recipe(draft, measured_draft_recipe(lead), recipe_force, done)
    info = read_bundle(draft)  # again: it now has the files just written
    recipe = read_recipe(draft_recipe_path(draft))
    write_card(draft, card_text(info, info.runtime_config, recipe, facts), force, done)
    return done, config
