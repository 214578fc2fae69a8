"""Turning a draft's measurements into its pack files: runtime_config.json (TokForge's
format), the draft recipe (config_cpu.json: only what carries over to a phone, by
writing.py's rule), this computer's settings for the pack (what was measured here), and
the model card.

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
from app.core.pack.files import CONFIG, RUNTIME_CONFIG
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
    write_this_computer,
)
from app.core.recipe.files import draft_recipe_path, read_recipe


def measured_draft_recipe(lead: TargetMeasurement) -> dict[str, Any]:
    """The draft recipe's keys as measured that carry over to a phone: the sampler (every
    bench decodes greedy). The recipe's backend, thread count, precision, memory and power
    are the phone's and stay as they are (`measured_here` holds this computer's)."""
    assert lead.best is not None
    return {"sampler_type": "greedy"}


def measured_here(lead: TargetMeasurement) -> dict[str, Any]:
    """The draft's settings in the best setting that belong to this computer: its thread
    count, precision and memory (for this computer's settings for the pack)."""
    best = lead.best
    assert best is not None
    return {
        "thread_num": best.setting.draft_threads,
        "precision": best.setting.draft_precision,
        "memory": best.setting.draft_memory,
    }


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
    DraftDeck did not write gets the keys that carry over only with `force_recipe`
    (default: as `force`; the window never does, and says it kept the recipe). What was
    measured on this computer goes to this computer's settings for the pack, whatever
    the recipe's owner: they are DraftDeck's own file."""
    refuse_foreign(draft, force)
    lead = leading_measurement(measurements)
    config = build_runtime_config(
        measurements,
        host if host is not None else host_facts(),
        date or time.strftime("%Y-%m-%d"),
        __version__,
        phone_draft=read_recipe(draft_recipe_path(draft)),
        phone_target=read_recipe(Path(lead.path) / CONFIG) if lead is not None else None,
    )
    done = Written()
    write_runtime_config(draft, config, force, done)
    if (threads := config["recommended"].get("draft_thread_num")) is not None:
        done.values[draft / RUNTIME_CONFIG] = {"recommended.draft_thread_num": threads}
    if lead is not None:
        recipe_force = force if force_recipe is None else force_recipe
        write_draft_recipe(draft, measured_draft_recipe(lead), recipe_force, done)
        write_this_computer(draft, measured_here(lead), done)
    info = read_bundle(draft)  # again: it now has the files just written
    recipe = read_recipe(draft_recipe_path(draft))
    write_card(draft, card_text(info, info.runtime_config, recipe, facts), force, done)
    return done, config
