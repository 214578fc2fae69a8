"""DraftDeck's own drafting settings: adaptive drafting on or off, and the per-round stop.

MNN and TokForge read a draft's `config_cpu.json`; these keys mean nothing to them and
would only confuse a reader of that file, so they live beside it in the draft pack as
`.draftdeck-drafting.json` (a DraftDeck file: never published, never pushed). A pack
without the file drafts adaptively; `adaptive: false` (the Chat switch, the Recipes
page, `--fixed`) drafts the full length every round, as MNN does.

- adaptive: the controller (core/measure/drafting_control.py) picks each round's length
  up to the recipe's `draft_predict_length` and steps aside when drafting does not pay.
- stop_below: drafting stops when the draft's top-1 probability falls below this (0 to
  1; 0: never). With adaptive drafting on it is a floor under what the controller
  learns; with it off, the only thing that shortens a round.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.infra.errors import BadValueError
from app.core.infra.jsonfile import atomic_write_json, read_json_object

DRAFTING_FILE = ".draftdeck-drafting.json"
ADAPTIVE, STOP_BELOW = "adaptive", "stop_below"


@dataclass(frozen=True)
class DraftingSettings:
    adaptive: bool = True
    stop_below: float = 0.0


# What MNN and TokForge run: the full draft length every round. Tune and Measure Pack
# measure with it, so their figures hold for the recipes they write.
FIXED_DRAFTING = DraftingSettings(adaptive=False)


def read_drafting(pack: Path) -> DraftingSettings:
    """The draft pack's settings; defaults when it has no file. A file that cannot be
    used raises a FileError naming it and the problem."""
    path = pack / DRAFTING_FILE
    if not path.exists() and not path.is_symlink():
        return DraftingSettings()
    return _from_object(read_json_object(path), path)


def write_drafting(pack: Path, settings: DraftingSettings) -> None:
    atomic_write_json(
        pack / DRAFTING_FILE, {ADAPTIVE: settings.adaptive, STOP_BELOW: settings.stop_below}
    )


def _from_object(data: dict[str, Any], path: Path) -> DraftingSettings:
    adaptive = data.get(ADAPTIVE, True)
    if not isinstance(adaptive, bool):
        raise BadValueError(path, f"{ADAPTIVE} must be true or false, not {adaptive!r}")
    stop = data.get(STOP_BELOW, 0.0)
    if isinstance(stop, bool) or not isinstance(stop, int | float) or not 0.0 <= stop <= 1.0:
        raise BadValueError(path, f"{STOP_BELOW} must be a number from 0 to 1, not {stop!r}")
    return DraftingSettings(adaptive, float(stop))
