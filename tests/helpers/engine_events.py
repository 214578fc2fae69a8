"""Engine events made by hand, for tests that feed the window what the engine would, and
a base for scripted engines that stand in for EngineClient."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from app.engine.load_rules import planned
from app.engine.protocol import Load, Loaded, Request, Round, Rounds


def loaded_event(**fields: Any) -> Loaded:
    """A load event of a plain batched pair, with `fields` in place of its defaults."""
    base: dict[str, Any] = {
        "target": {},
        "draft": None,
        "draft_length": 3,
        "load_seconds": 0.0,
        "lossless_expected": True,
        "verify": "batched",
        "linear_attention": False,
        "linear_rollback": None,
        "cannot_pay": None,
        "memory": {},
        "memory_warning": None,
    }
    return Loaded(**{**base, **fields})


def rounds_event(
    elapsed: float, tokens: Sequence[int], rounds: Sequence[tuple[int, int, int]]
) -> Rounds:
    """A batch of `tokens` made by `rounds` of (emitted, accepted, drafted)."""
    return Rounds(
        tokens=tuple(tokens),
        from_draft=(False,) * len(tokens),
        text="",
        pieces=("",) * len(tokens),
        elapsed=elapsed,
        rounds=tuple(Round(e, a, d, 0.0, 0.0) for e, a, d in rounds),
    )


class ScriptedClient(ABC):
    """The part of EngineClient a scripted engine keeps: `load` asks the load plan first,
    then hands the request to the subclass's `run`."""

    interrupted = False  # told to stop what runs (a sweep's Cancel)

    @abstractmethod
    def run(self, request: Request[Any], *_: Any, **__: Any) -> object:
        """The scripted answer to `request`."""

    def load(self, request: Load) -> object:
        planned(request)
        return self.run(request)

    def interrupt(self) -> None:
        """A cancel's word to the engine: a script runs each request whole anyway."""
        self.interrupted = True

    def resume(self) -> None:
        self.interrupted = False
