"""A chat that has grown past its context window keeps going by leaving out its oldest
turns: the system messages stay, whole turns (a user message and the replies after it)
go from the front, and the newest user message always stays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Turn = TypeVar("Turn")


def drop_oldest_turns(
    messages: Sequence[Turn], role: Callable[[Turn], str], fits: Callable[[list[Turn]], bool]
) -> tuple[list[Turn], int] | None:
    """The messages to send and how many non-system messages were left out (counted from
    the start of them), or None when even the newest turn alone does not fit."""
    system = [m for m in messages if role(m) == "system"]
    others = [m for m in messages if role(m) != "system"]
    starts = [i for i, m in enumerate(others) if role(m) == "user"] or [0]
    for start in starts:
        kept = system + others[start:]
        if fits(kept):
            return kept, start
    return None
