"""Greedy acceptance by draft position, measured on this computer, kept per pair.

Greedy acceptance by position is a property of the two models and the text, not of the
device: it carries over to a phone, where tok/s do not (phone_forecast.py uses it).
Every greedy speculative reply or run adds its counts here (`add_tallies`), so the
figure grows with the user's own prompts.

Kept in DraftDeck's data folder (`pair_acceptance.json`), per pair: the two packs'
resolved folders, and a stamp of their model files (weights, graph, tokenizer, model
config; not the recipes, whose thread counts and draft length do not change what the
models pick). A pair whose models changed starts again. Counts measured where the
target's verify is exact (memory "normal") are kept apart from low-precision ones
(memory "low" quantizes activations, so a d+1 verify may disagree with one-token steps
and acceptance reads lower than the models' own): the exact ones are used when there
are any. Merged under a lock (json_store.py); at most MAX_PAIRS pairs, the ones least
recently added to go first.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object
from app.core.infra.paths import app_dirs
from app.core.measure.json_store import read_store, update_store
from app.core.measure.metrics import ADAPTIVE, DecodeStats
from app.core.measure.words import Mode
from app.core.pack.folder_stamp import folder_stamp

STORE_VERSION = 1
STORE_NAME = "pair_acceptance.json"
MAX_PAIRS = 100
MAX_POSITIONS = 16  # the longest draft length counted; longer ones are cut here
EXACT, LOW = "exact", "low"
# Files that are recipes or DraftDeck's own notes: changing them leaves the models alone.
_RECIPE_FILES = frozenset(
    {"config.json", "config_cpu.json", "draft_config_cpu.json", "runtime_config.json"}
)


@dataclass(frozen=True)
class PositionTallies:
    """Greedy acceptance by draft position, measured on THIS computer."""

    reached: tuple[int, ...]  # rounds that reached position i (i = 0: first drafted token)
    accepted: tuple[int, ...]  # of those, rounds whose token i was accepted
    exact: bool  # measured where verify is exact (memory normal); False: low precision
    tokens: int  # decoded tokens the tallies come from

    @property
    def rates(self) -> tuple[float, ...]:
        """Acceptance at each position that was reached (conditional hit rates)."""
        out = []
        for a, r in zip(self.accepted, self.reached, strict=True):
            if r <= 0:
                break
            out.append(a / r)
        return tuple(out)

    @property
    def rounds(self) -> int:
        return self.reached[0] if self.reached else 0

    def merged(self, other: PositionTallies) -> PositionTallies:
        n = max(len(self.reached), len(other.reached))

        def add(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(
                (x[i] if i < len(x) else 0) + (y[i] if i < len(y) else 0) for i in range(n)
            )

        return PositionTallies(
            add(self.reached, other.reached),
            add(self.accepted, other.accepted),
            self.exact and other.exact,
            self.tokens + other.tokens,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "reached": list(self.reached),
            "accepted": list(self.accepted),
            "exact": self.exact,
            "tokens": self.tokens,
        }

    @classmethod
    def from_json(cls, data: Any) -> PositionTallies | None:
        """Tallies from a stored object; None when it is not one (a hand-edited file)."""
        if not isinstance(data, dict):
            return None
        reached, accepted = data.get("reached"), data.get("accepted")
        exact, tokens = data.get("exact"), data.get("tokens")
        if not (_counts(reached) and _counts(accepted) and len(reached) == len(accepted)):
            return None
        if not isinstance(exact, bool) or not _count(tokens):
            return None
        if any(a > r for a, r in zip(accepted, reached, strict=True)):
            return None
        cut = min(len(reached), MAX_POSITIONS)
        return cls(tuple(reached[:cut]), tuple(accepted[:cut]), exact, tokens)

    @classmethod
    def from_stats(cls, stats: DecodeStats, exact: bool) -> PositionTallies:
        cut = min(len(stats.position_reached), MAX_POSITIONS)
        return cls(
            tuple(stats.position_reached[:cut]),
            tuple(stats.position_accepted[:cut]),
            exact,
            stats.decode_tokens,
        )


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _counts(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(_count(v) for v in value)


def store_path() -> Path:
    return app_dirs().data / STORE_NAME


def pair_key(target: Path, draft: Path) -> str:
    """The pair's identity in the store: both folders, resolved."""
    return f"{Path(target).resolve()}\n{Path(draft).resolve()}"


def model_stamp(pack: Path) -> str:
    """A short digest of the pack's model files (names, sizes, modification times);
    recipes, their backups and DraftDeck's own hidden files are left out."""
    _, _, files = folder_stamp(Path(pack).resolve())
    kept = [f for f in files if _model_file(f[0])]
    return hashlib.sha256(repr(kept).encode("utf-8")).hexdigest()[:16]


def _model_file(relative: str) -> bool:
    # A recipe save also leaves <recipe>.bak: counting it would forget the counts at
    # every save (Tune's Apply among them).
    name = Path(relative).name
    stem = name.removesuffix(".bak")
    return stem not in _RECIPE_FILES and not relative.startswith(".")


def pair_stamp(target: Path, draft: Path) -> str:
    return f"{model_stamp(target)}:{model_stamp(draft)}"


def _entry(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    pairs = data.get("pairs")
    entry = pairs.get(key) if isinstance(pairs, dict) else None
    return entry if isinstance(entry, dict) else None


def read_tallies(target: Path, draft: Path) -> PositionTallies | None:
    """The tallies stored for this pair (None: none yet, or its models changed since).
    Exact ones when any were measured, else the low-precision ones."""
    entry = _entry(read_store(store_path()), pair_key(target, draft))
    if entry is None or entry.get("stamp") != pair_stamp(target, draft):
        return None
    for kind in (EXACT, LOW):
        tallies = PositionTallies.from_json(entry.get(kind))
        if tallies is not None and tallies.rounds > 0:
            return tallies
    return None


def target_memory_exact(target: Path) -> bool:
    """Whether the target's recipe verifies exactly (memory other than "low", MNN's
    default); used when the caller does not say (it knows better: Loaded says it)."""
    try:
        recipe = read_json_object(Path(target) / "config.json")
    except FileError:
        return False
    return bool(recipe.get("memory", "low") != "low")


def add_tallies(target: Path, draft: Path, stats: DecodeStats, exact: bool | None = None) -> None:
    """Add a greedy speculative reply's or run's counts for this pair. Sampled replies
    and plain ones are left out (nothing greedy was checked), and so are replies of
    adaptive drafting: it stops a round where the draft is unsure, so the positions it
    reaches hold its confident tokens only and would read high for a phone, which
    drafts the full length. `exact`: whether the target verified exactly (the engine's
    Loaded.lossless_expected); None reads the target's config.json."""
    if (
        stats.mode != Mode.SPECULATIVE
        or stats.sampler != "greedy"
        or stats.drafting == ADAPTIVE
        or not any(stats.position_reached)
    ):
        return
    if exact is None:
        exact = target_memory_exact(target)
    add_position_tallies(target, draft, PositionTallies.from_stats(stats, exact))


def add_position_tallies(target: Path, draft: Path, tallies: PositionTallies) -> None:
    key, stamp = pair_key(target, draft), pair_stamp(target, draft)
    kind = EXACT if tallies.exact else LOW

    def change(data: dict[str, Any]) -> None:
        pairs = data.get("pairs")
        if not isinstance(pairs, dict):
            pairs = data["pairs"] = {}
        entry = pairs.get(key)
        if not isinstance(entry, dict) or entry.get("stamp") != stamp:
            entry = {"stamp": stamp}  # new pair, or its models changed: start again
        old = PositionTallies.from_json(entry.get(kind))
        entry[kind] = (old.merged(tallies) if old else tallies).to_json()
        entry["updated"] = time.time()
        pairs.pop(key, None)
        pairs[key] = entry
        data["version"] = STORE_VERSION
        if len(pairs) > MAX_PAIRS:
            oldest = sorted(pairs, key=lambda k: _updated(pairs[k]))
            for stale in oldest[: len(pairs) - MAX_PAIRS]:
                del pairs[stale]

    update_store(store_path(), change)


def forget_tallies(target: Path, draft: Path) -> bool:
    """Delete the pair's tallies (a new measurement starts from nothing); whether any
    were stored."""
    key = pair_key(target, draft)

    def change(data: dict[str, Any]) -> bool:
        pairs = data.get("pairs")
        return bool(isinstance(pairs, dict) and pairs.pop(key, None) is not None)

    return update_store(store_path(), change)


def _updated(entry: Any) -> float:
    value = entry.get("updated") if isinstance(entry, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0
