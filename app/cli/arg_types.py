"""Argument types that refuse a bad number in the parser, with argparse's usage error,
instead of letting the engine guess or fail later."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from app.core.recipe.schema import FIELDS


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse `type` for a whole number in minimum..maximum (no upper bound if None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"{minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"{value} is out of range ({bounds})")
        return value

    return parse


def number(
    minimum: float, maximum: float | None = None, *, above_minimum: bool = False
) -> Callable[[str], float]:
    """An argparse `type` for a finite number from minimum (excluded if `above_minimum`)
    up to maximum (no upper bound if None)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        low_ok = value > minimum if above_minimum else value >= minimum
        if not math.isfinite(value) or not low_ok or (maximum is not None and value > maximum):
            low = f"above {minimum:g}" if above_minimum else f"at least {minimum:g}"
            bounds = f"{low}, up to {maximum:g}" if maximum is not None else low
            raise argparse.ArgumentTypeError(f"{text} is out of range ({bounds})")
        return value

    return parse


def number_list(item: Callable[[str], float]) -> Callable[[str], tuple[float, ...]]:
    """An argparse `type` for comma-separated numbers, each checked by `item`."""

    def parse(text: str) -> tuple[float, ...]:
        parts = [p.strip() for p in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
        return tuple(dict.fromkeys(item(p) for p in parts))  # in order, each once

    return parse


def _draft_length_bounds() -> tuple[int, int]:
    field = FIELDS["draft_predict_length"]
    assert field.minimum is not None and field.maximum is not None
    return int(field.minimum), int(field.maximum)


# The recipe schema's range for draft_predict_length, which the engine enforces too.
draft_length = whole_number(*_draft_length_bounds())
temperature = number(0.0)
top_k = whole_number(0)
top_p = number(0.0, 1.0, above_minimum=True)
probability = number(0.0, 1.0)
# The engine's own fresh seeds are 63-bit; a larger one would not fit a C integer.
seed = whole_number(0, 2**63 - 1)
