"""Verify agreement: how often the target's batched d+1 verify picks the same greedy token
as its own one-token steps, for one target, recipe and draft length.

Why it matters: acceptance is only the draft's quality when the verify is exact. With
`memory: "low"` MNN quantizes activations per call, and a (d+1)-row call quantizes
differently from a one-row call, so the target disagrees with itself on some tokens.
Even an identical draft is then accepted less than always (`ceiling`), and speculative
output is not token-identical to plain decoding. The figure is measured with the target
alone (no second copy in memory) and cached per target and recipe, since it depends
only on them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.infra.paths import app_dirs
from app.core.measure.words import VerifyMethod

CACHE_VERSION = 1
CACHE_LIMIT = 200  # entries kept; the oldest go first
# Below this share of the ceiling (what an identical draft would get), acceptance is the
# draft's doing; at or above it the verify's own disagreement is what holds it down.
LIMITED_SHARE = 0.9
TO = "\N{EN DASH}"


@dataclass(frozen=True)
class VerifyAgreement:
    agreement: float  # matched / checked
    matched: int  # verify rows whose greedy token equals the one-token step's
    checked: int  # verify rows compared
    draft_length: int
    verify: VerifyMethod
    cached: bool = False

    @property
    def exact(self) -> bool:
        return self.matched == self.checked

    @property
    def ceiling(self) -> float:
        """The acceptance an identical draft would get: with each verify row agreeing
        with probability a, draft position i is accepted when rows 1..i all agree, so
        accepted / drafted = (a + a^2 + ... + a^d) / d. (Measured at Qwen3-0.6B scale:
        a = 0.836, d = 3 predicts 0.706; an identical draft got 0.698.)"""
        return _ceiling(self.agreement, self.draft_length)

    @property
    def ceiling_range(self) -> tuple[float, float]:
        """The ceiling's 95 % range: the agreement is measured on `checked` rows of one
        probe text, so it carries a binomial (Wilson) interval, and the ceiling, rising
        with the agreement, carries the ceilings of its two ends."""
        low, high = wilson_interval(self.matched, self.checked)
        return _ceiling(low, self.draft_length), _ceiling(high, self.draft_length)

    def to_json(self) -> dict[str, Any]:
        low, high = self.ceiling_range
        return {
            **asdict(self),
            "exact": self.exact,
            "ceiling": self.ceiling,
            "ceiling_low": low,
            "ceiling_high": high,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VerifyAgreement:
        names = cls.__dataclass_fields__
        values = {k: v for k, v in data.items() if k in names}
        if "verify" in values:
            values["verify"] = VerifyMethod(values["verify"])
        return cls(**values)

    def summary_keys(self, acceptance: float | None) -> dict[str, Any]:
        """The agreement in a bench/tune summary, with what it means for its acceptance."""
        return {
            "verify_agreement": self.to_json(),
            "acceptance_limited_by_verify": self.limited(acceptance),
            "verify_note": self.sentence(acceptance),
        }

    def limited(self, acceptance: float | None) -> bool:
        """Is this acceptance held down by the verify rather than by the draft?"""
        return (
            not self.exact and acceptance is not None and acceptance >= LIMITED_SHARE * self.ceiling
        )

    def brief(self, acceptance: float | None = None) -> str:
        """sentence() in a few words, for a line with no room for it (Chat's pair line
        and a reply's figures): the same estimate with its range, the same verdict."""
        head = f"verify agreement {self.agreement:.2f}"
        if self.exact or self.verify == VerifyMethod.STEPWISE:
            return head
        low, high = self.ceiling_range
        text = (
            f"{head} (an identical draft: an estimated {self.ceiling:.2f}, "
            f"95 % range {low:.2f}{TO}{high:.2f})"
        )
        if acceptance is None or not self.limited(acceptance):
            return text
        if acceptance > high:
            return f"{text}, acceptance above that range: mostly the recipe's verify"
        return f"{text}, acceptance near it: limited by the recipe"

    def sentence(self, acceptance: float | None = None) -> str:
        """What to tell the user, in one or two plain sentences. The ceiling is an
        estimate from a probe text, so it is given with its range, and never stated as
        a limit below an acceptance that was measured above it."""
        if self.verify == VerifyMethod.STEPWISE:
            return "Verify agreement 1.00: this target is verified one token at a time (exact)."
        head = f"Verify agreement {self.agreement:.2f} ({self.matched}/{self.checked} tokens)"
        if self.exact:
            return f"{head}: the batched verify matches single steps; acceptance is the draft's."
        low, high = self.ceiling_range
        estimate = (
            f"{head}: with this recipe the target's batched verify disagrees with its own "
            "single steps, so output is not identical to plain decoding, and even an "
            f"identical draft would be accepted less than always: an estimated "
            f"{self.ceiling:.2f} at d={self.draft_length} (95 % range {low:.2f}{TO}{high:.2f}, "
            f"from {self.checked} tokens of a probe text)."
        )
        if acceptance is None or not self.limited(acceptance):
            return estimate
        if acceptance > high:
            return (
                f"{estimate} Acceptance {acceptance:.2f} is above that range (these prompts "
                "are not the probe's text): the draft does about as well as an identical "
                "one would, and what keeps acceptance below 1 is mostly the recipe's verify."
            )
        return (
            f"{estimate} Acceptance {acceptance:.2f} is near that estimate: it is limited "
            "by the recipe, not the draft."
        )


def _ceiling(agreement: float, draft_length: int) -> float:
    d = max(1, draft_length)
    return sum(agreement**i for i in range(1, d + 1)) / d


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a share (0-1 when nothing was tried): unlike
    the plain normal interval it stays within 0-1 and is honest at 60/64."""
    if trials <= 0:
        return 0.0, 1.0
    share = successes / trials
    scale = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / scale
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def cache_key(
    target: Path, recipe: dict[str, Any], draft_length: int, engine: str, probe: str
) -> str:
    """Everything the figure depends on: the weights, the merged recipe, d, the MNN
    build and the probe (prompt and length)."""
    weight_stats = []
    for name in sorted(os.listdir(target)):
        if name.endswith((".mnn", ".weight", ".bin")):
            stat = (target / name).stat()
            weight_stats.append([name, stat.st_size, stat.st_mtime_ns])
    blob = json.dumps(
        {
            "target": os.path.realpath(target),
            "files": weight_stats,
            "recipe": recipe,
            "d": draft_length,
            "engine": engine,
            "probe": probe,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _cache_file() -> Path:
    return app_dirs().cache / "verify-agreement.json"


def _entries() -> dict[str, Any]:
    try:
        data = read_json_object(_cache_file())
    except FileError:
        return {}  # missing or damaged: it is only a cache
    if data.get("version") != CACHE_VERSION or not isinstance(data.get("entries"), dict):
        return {}
    return dict(data["entries"])


def cached(key: str) -> VerifyAgreement | None:
    entry = _entries().get(key)
    if not isinstance(entry, dict):
        return None
    try:
        found = VerifyAgreement.from_json(entry)
    except (TypeError, ValueError):
        return None
    return VerifyAgreement(**{**asdict(found), "cached": True})


def store(key: str, result: VerifyAgreement) -> None:
    """Add one figure (read-modify-write: another process's entries are kept)."""
    entries = _entries()
    entries.pop(key, None)
    entries[key] = {**asdict(result), "cached": False}
    while len(entries) > CACHE_LIMIT:
        del entries[next(iter(entries))]
    # A read-only or full disk costs a re-measure next time, nothing more.
    with contextlib.suppress(OSError):
        atomic_write_json(_cache_file(), {"version": CACHE_VERSION, "entries": entries})
