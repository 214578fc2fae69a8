"""Every installed target against every draft: the Pair page's table, built off the GUI
thread and kept between builds.

A verdict depends only on the two packs' files, so each pair's cell is kept under the
two packs' stamps (folder_stamp.py) and judged again only when either pack changed. A
library of 300 packs holds 33,600 pairs; judging one takes 0.05-0.2 ms, and the first
pair of two different tokenizer files compares their vocabularies (0.1-0.4 s per file
at 151,936 tokens), which is why `PairTables.build` belongs on a worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.core.pack import compat
from app.core.pack.folder_stamp import PackStamp
from app.core.pack.library import PackEntry
from app.core.pack.pairing import (
    DRAFT_ROLES,
    TARGET_ROLES,
    Cell,
    best_pair,
    cell_of,
    role_of,
)
from app.core.pack.verdict import Verdict

PairKey = tuple[PackStamp, PackStamp]  # (the target's stamp, the draft's)


def judge(target: PackEntry, draft: PackEntry) -> Verdict:
    """The pair's verdict, either pack read or not."""
    t = target.info if target.info is not None else target.error
    d = draft.info if draft.info is not None else draft.error
    assert t is not None and d is not None
    return compat.assess_either(t, d)


def _key(target: PackEntry, draft: PackEntry) -> PairKey:
    return (target.stamp, draft.stamp)


@dataclass(frozen=True, eq=False)  # compare `stamps`: comparing readings is slow
class PairTable:
    """One reading of the library: its packs, which can be targets and drafts, a cell
    per (target, draft) and the pair to offer first (pairing.best_pair)."""

    entries: tuple[PackEntry, ...] = ()
    targets: tuple[PackEntry, ...] = ()
    drafts: tuple[PackEntry, ...] = ()
    cells: tuple[tuple[Cell, ...], ...] = ()  # a row per target, a column per draft
    best: tuple[PackEntry, PackEntry] | None = None
    # Equal when every pack reads the same: a table equal to the one shown changes nothing.
    stamps: tuple[tuple[PackStamp, bool], ...] = ()
    _rows: dict[Path, int] = field(default_factory=dict, compare=False, repr=False)
    _columns: dict[Path, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._rows.update((e.path, i) for i, e in enumerate(self.targets))
        self._columns.update((e.path, i) for i, e in enumerate(self.drafts))

    def cell(self, target: PackEntry, draft: PackEntry) -> Cell | None:
        """The pair's cell, or None when they are not a target and a draft of this table."""
        row, column = self._rows.get(target.path), self._columns.get(draft.path)
        if row is None or column is None:
            return None
        return self.cells[row][column]


class PairTables:
    """Builds PairTables (from any thread), judging only pairs not judged before, and
    keeps the full verdicts asked for one pair at a time (the verdict card's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cells: dict[PairKey, Cell] = {}
        self._verdicts: dict[PairKey, Verdict] = {}
        self._last = PairTable(stamps=((("", -2, ()), False),))  # equal to no reading

    def build(self, entries: Sequence[PackEntry]) -> PairTable:
        stamps = tuple((e.stamp, e.by_reference) for e in entries)
        with self._lock:
            last, known = self._last, dict(self._cells)
        if last.stamps == stamps:
            return last
        targets = tuple(e for e in entries if role_of(e) in TARGET_ROLES)
        drafts = tuple(e for e in entries if role_of(e) in DRAFT_ROLES)
        rows: list[tuple[Cell, ...]] = []
        kept: dict[PairKey, Cell] = {}
        for target in targets:
            row: list[Cell] = []
            for draft in drafts:
                key = _key(target, draft)
                cell = known.get(key)
                if cell is None:
                    cell = cell_of(judge(target, draft))
                kept[key] = cell
                row.append(cell)
            rows.append(tuple(row))
        row_of = {t.path: i for i, t in enumerate(targets)}
        column_of = {d.path: i for i, d in enumerate(drafts)}
        best = best_pair(targets, drafts, lambda t, d: rows[row_of[t.path]][column_of[d.path]])
        table = PairTable(tuple(entries), targets, drafts, tuple(rows), best, stamps)
        with self._lock:  # pairs of packs no longer installed (or since changed) go
            self._last, self._cells = table, kept
            self._verdicts = {k: v for k, v in self._verdicts.items() if k in kept}
        return table

    def verdict(self, target: PackEntry, draft: PackEntry) -> Verdict:
        """The pair's full verdict (reasons, advice), judged once per pair of readings:
        on the caller's thread, cheap once `build` has judged the pair (the
        vocabularies it compares are kept by content, vocabulary.py)."""
        key = _key(target, draft)
        with self._lock:
            found = self._verdicts.get(key)
        if found is None:
            found = judge(target, draft)
            with self._lock:
                self._verdicts[key] = found
        return found
