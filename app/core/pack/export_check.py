"""A pack's export check as it was recorded beside the pack (export_check.json, written
by `draftdeck verify-export` and Make Pack: app/core/packmaking/verify_result.py), read
back for the Library, `draftdeck info` and Publish.

Only the verdict and its figures at `memory: normal` (where the verdict is taken) are
read. The file also names the pack's and the source model's folders on this computer;
Publish uploads it with their names only (`without_local_paths`). One small file per
pack: the Library reads it with the pack, only when the pack's files changed (its scan
is cached by folder stamps). A file that cannot be read is
reported as unreadable, naming it; it never stops the pack from being listed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any

from app.core.infra.errors import BadValueError, FileError, MissingFileError
from app.core.infra.jsonfile import decode_text, parse_json, read_json_object
from app.core.infra.words import Word
from app.core.pack.files import EXPORT_CHECK

NORMAL = "normal"  # the memory setting the verdict is taken at
# The keys that hold folders of this computer (verify_result.ExportCheck.to_json).
LOCAL_PATHS = ("pack", "source")


class ExportVerdict(Word):
    VERIFIED = "export verified"
    NOT_VERIFIED = "export not verified"
    UNREADABLE = "export check unreadable"


def agreement_text(value: float) -> str:
    """An agreement to three decimals, rounded down: 0.9899 rounded would read "0.990"
    beside "at least 0.99 expected". The epsilon keeps 0.99 itself (989.999... after the
    multiplication) from dropping to 0.989."""
    return f"{math.floor(value * 1000 + 1e-6) / 1000:.3f}"


@dataclass(frozen=True)
class SavedExportCheck:
    """export_check.json as read back. `faithful` and `cost` are the top-1 agreements at
    memory normal with the source quantized like the export and with the source as it
    is (None when the file has no memory-normal run); `problem` says why the file could
    not be read (then the verdict is UNREADABLE and nothing else is known)."""

    file: Path
    verdict: ExportVerdict
    faithful: float | None = None
    cost: float | None = None
    reasons: tuple[str, ...] = ()  # what differs, when not verified
    date: str = ""
    problem: str = ""

    @property
    def verified(self) -> bool:
        return self.verdict == ExportVerdict.VERIFIED

    def figures(self) -> str:
        """'faithful 0.998 top-1 against the quantized source, quantization cost 0.910'."""
        if self.faithful is None or self.cost is None:
            return "no figures at memory normal"
        return (
            f"faithful {agreement_text(self.faithful)} top-1 against the quantized source, "
            f"quantization cost {agreement_text(self.cost)}"
        )

    def headline(self) -> str:
        """One line: the verdict and, when verified, its figures."""
        if self.verdict == ExportVerdict.UNREADABLE:
            return f"Export check unreadable: {self.problem} ({self.file})"
        if self.verified:
            return f"Export verified ({self.figures()})"
        return "Export not verified"

    def words(self) -> str:
        """The headline with what differs: for a tooltip, a terminal or a warning."""
        if self.verdict != ExportVerdict.NOT_VERIFIED:
            return self.headline()
        differs = " ".join(self.reasons) or self.figures()
        return f"Export not verified: {differs}"

    def to_json(self) -> dict[str, Any]:
        """`draftdeck info --json`'s "export_check"."""
        return {
            "verdict": str(self.verdict),
            "verified": self.verified,
            "faithful": self.faithful,
            "quantization_cost": self.cost,
            "reasons": list(self.reasons),
            "date": self.date,
            "file": str(self.file),
            "problem": self.problem or None,
        }


def read_export_check(pack: Path) -> SavedExportCheck | None:
    """The pack's recorded export check; None when it has none (never checked)."""
    path = Path(pack) / EXPORT_CHECK
    try:
        data = read_json_object(path)
        return _check_of(path, data)
    except MissingFileError:
        return None
    except FileError as exc:
        return SavedExportCheck(path, ExportVerdict.UNREADABLE, problem=exc.problem)


def _check_of(path: Path, data: dict[str, Any]) -> SavedExportCheck:
    verified = data.get("verified")
    if not isinstance(verified, bool):
        raise BadValueError(path, 'has no "verified" true or false')
    reasons = data.get("reasons", [])
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise BadValueError(path, '"reasons" is not a list of texts')
    date = data.get("date")
    faithful, cost = _normal_figures(path, data.get("runs"))
    return SavedExportCheck(
        path,
        ExportVerdict.VERIFIED if verified else ExportVerdict.NOT_VERIFIED,
        faithful,
        cost,
        tuple(reasons),
        date if isinstance(date, str) else "",
    )


def _normal_figures(path: Path, runs: object) -> tuple[float | None, float | None]:
    """The two agreements of the memory-normal run, if the file has one."""
    if not isinstance(runs, list):
        raise BadValueError(path, '"runs" is not a list')
    for run in runs:
        if isinstance(run, dict) and run.get("memory") == NORMAL:
            faithful = _agreement(run.get("faithful"))
            cost = _agreement(run.get("quantization_cost"))
            if faithful is None or cost is None:
                raise BadValueError(
                    path, "the memory normal run's agreements are not numbers from 0 to 1"
                )
            return faithful, cost
    return None, None


def _agreement(value: object) -> float | None:
    """A top-1 agreement, or None when `value` is no number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and 0 <= value <= 1 else None


def without_local_paths(raw: bytes, path: Path) -> bytes:
    """export_check.json's bytes as they are published: the folders it names (the
    pack's, the source model's) cut to their names, everything else as written."""
    data = parse_json(decode_text(raw, path), path)
    if not isinstance(data, dict):
        raise BadValueError(path, "is not a JSON object")
    for key in LOCAL_PATHS:
        if isinstance(data.get(key), str):
            # Either separator: the file may have been written on another system.
            data[key] = PureWindowsPath(data[key]).name
    return (json.dumps(data, indent=4, ensure_ascii=False) + "\n").encode("utf-8")
