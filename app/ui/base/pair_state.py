"""The pair the engine runs, as the window knows it: one immutable snapshot.

The engine bridge (engine_bridge.py) is its only writer: it publishes a new snapshot
whenever a fact changes (a load asked, refused or done, the verify agreement measured
or put off, a failure, a crash). The Chat page, its mode box and its header render the
latest one and keep no copies, so no two of them can tell different stories about the
pair (a conversation switching the pair, a mode carried over).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.measure.verify_agreement import VerifyAgreement
from app.engine.protocol import Loaded, VerifyMethod

Pair = tuple[Path | None, Path | None]  # target, draft


@dataclass(frozen=True)
class PairState:
    target: Path | None = None
    draft: Path | None = None  # the chosen draft, even while its target runs alone
    # The engine's facts from the load last asked (or of its target alone); None until it
    # answers, and after a refusal or a failure: a reload never shows an earlier load's.
    loaded: Loaded | None = None
    agreement: VerifyAgreement | None = None  # that load's, once measured
    measuring: bool = False  # the agreement is being measured now
    after_reply: bool = False  # its measurement waits for the reply being written
    blocked: str = ""  # why the pair cannot work together ("": it can)
    alone: bool = False  # blocked, so its target runs alone (Plain mode)
    error: str = ""  # the last failure's words (a refused load, a request, a crash)
    crash_code: str = ""  # why the worker last went away: an EngineCrashed code

    @property
    def pair(self) -> Pair:
        return self.target, self.draft

    @property
    def memory_warning(self) -> str:
        """The engine's word when the pair barely fits in memory."""
        return (self.loaded.memory_warning or "") if self.loaded is not None else ""

    @property
    def inexact_verify(self) -> bool:
        """memory: low: a batched verify may differ from plain decoding."""
        loaded = self.loaded
        return (
            loaded is not None
            and not loaded.lossless_expected
            and loaded.verify == VerifyMethod.BATCHED
        )
