"""What a draft step costs beside a target step (c), measured on this computer, per pair.

The Pair page and `draftdeck check` estimate c from the bytes of weights each model
reads per token (pack/draft_cost.py). Once the pair has run here, a measured c takes
that estimate's place, said as measured on this computer: a Tune sweep's setting or a
benchmark run (`draftdeck bench`, Measure Pack) records the c it measured
(bench_summary.PairFigures.cost_ratio: the median draft step over the median plain
target step), the latest one kept.

Kept in DraftDeck's data folder (`pair_cost.json`), per pair (both packs' resolved
folders) with the stamp of their model files (pair_acceptance.pair_stamp: recipes left
out): a pair whose models changed is estimated again until it runs. Merged under a lock
(json_store.py); at most MAX_PAIRS pairs, the ones measured longest ago go first.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from app.core.infra.errors import WriteFailedError
from app.core.infra.paths import app_dirs
from app.core.measure.bench_summary import PairFigures
from app.core.measure.json_store import read_store, update_store
from app.core.measure.pair_acceptance import pair_key, pair_stamp
from app.core.pack.draft_cost import COST_CODES, DraftCost, cost_reason
from app.core.pack.verdict import Verdict, verdict_of

log = logging.getLogger("draftdeck.measure")

STORE_VERSION = 1
STORE_NAME = "pair_cost.json"
MAX_PAIRS = 100
# Who measured it, in the card's words: Tune (also Measure Pack's sweep), or a bench
# (`draftdeck bench`, Measure Pack's comparison with plain decoding).
BY_TUNE, BY_BENCH = "a Tune sweep", "a benchmark run"
STEP_UNIT = "ms a step"


@dataclass(frozen=True)
class MeasuredCost:
    """c as measured on THIS computer, with the two step times it came from."""

    ratio: float
    target_step_ms: float
    draft_step_ms: float
    by: str  # BY_TUNE, BY_BENCH
    when: float  # seconds since the epoch

    def to_json(self) -> dict[str, Any]:
        return {
            "ratio": self.ratio,
            "target_step_ms": self.target_step_ms,
            "draft_step_ms": self.draft_step_ms,
            "by": self.by,
            "when": self.when,
        }

    @classmethod
    def from_json(cls, data: Any) -> MeasuredCost | None:
        """A cost from a stored object; None when it is not one (a hand-edited file)."""
        if not isinstance(data, dict):
            return None
        keys = ("ratio", "target_step_ms", "draft_step_ms", "when")
        numbers = _positives([data.get(k) for k in keys])
        if numbers is None or not isinstance(data.get("by"), str):
            return None
        ratio, target_ms, draft_ms, when = numbers
        return cls(ratio, target_ms, draft_ms, str(data["by"]), when)

    def as_draft_cost(self) -> DraftCost:
        """For the verdict: the source in words, each side's step time as evidence."""
        day = datetime.fromtimestamp(self.when)
        source = f"measured on this computer by {self.by} on {day.day} {day:%B %Y}"
        return DraftCost(
            self.ratio,
            source,
            round(self.target_step_ms, 2),
            round(self.draft_step_ms, 2),
            STEP_UNIT,
        )


def _positives(values: list[Any]) -> list[float] | None:
    """The values as floats when every one is a finite number above 0, else None."""
    out = []
    for value in values:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        if not (math.isfinite(value) and value > 0):
            return None
        out.append(float(value))
    return out


def store_path() -> Path:
    return app_dirs().data / STORE_NAME


def record_cost(target: Path, draft: Path, figures: PairFigures, by: str) -> MeasuredCost | None:
    """Keep the c these figures measured for the pair (the latest wins); None, and
    nothing kept, when they hold no c (no draft step was timed) or the data folder
    refuses the write (logged: the measurement itself stands)."""
    numbers = _positives([figures.cost_ratio, figures.target_step_ms, figures.draft_step_ms])
    if numbers is None:
        return None
    ratio, target_ms, draft_ms = numbers
    cost = MeasuredCost(ratio, target_ms, draft_ms, by, time.time())
    key, stamp = pair_key(target, draft), pair_stamp(target, draft)

    def change(data: dict[str, Any]) -> None:
        pairs = data.get("pairs")
        if not isinstance(pairs, dict):
            pairs = data["pairs"] = {}
        pairs.pop(key, None)  # re-added last: the dict's order is the order measured
        pairs[key] = {"stamp": stamp, **cost.to_json()}
        while len(pairs) > MAX_PAIRS:
            del pairs[next(iter(pairs))]
        data["version"] = STORE_VERSION

    try:
        update_store(store_path(), change)
    except WriteFailedError as exc:  # measured all the same: only its note here is lost
        log.warning("the measured c was not kept: %s", exc)
        return None
    return cost


def read_cost(target: Path, draft: Path) -> MeasuredCost | None:
    """The c measured for this pair here (None: never, or its models changed since)."""
    pairs = read_store(store_path()).get("pairs")
    entry = pairs.get(pair_key(target, draft)) if isinstance(pairs, dict) else None
    if not isinstance(entry, dict) or entry.get("stamp") != pair_stamp(target, draft):
        return None
    return MeasuredCost.from_json(entry)


def with_measured_cost(verdict: Verdict, target: Path, draft: Path) -> Verdict:
    """The verdict with the c measured here in the estimate's place (its finding and
    level follow the measured figure); as it is when the pair never ran here or is
    blocked (nothing about costs is said then)."""
    measured = read_cost(target, draft) if not verdict.blocked else None
    if measured is None:
        return verdict
    found = cost_reason(measured.as_draft_cost())
    reasons = [r for r in verdict.reasons if r.code not in COST_CODES]
    at = next((i for i, r in enumerate(verdict.reasons) if r.code in COST_CODES), len(reasons))
    reasons.insert(at, found)
    return verdict_of(reasons, verdict.recommendation, verdict.target_model)
