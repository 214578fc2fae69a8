"""Argument types that refuse a bad number in the parser, with argparse's usage error,
instead of letting the engine guess or fail later."""

from __future__ import annotations

import argparse
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


def _draft_length_bounds() -> tuple[int, int]:
    field = FIELDS["draft_predict_length"]
    assert field.minimum is not None and field.maximum is not None
    return int(field.minimum), int(field.maximum)


# The recipe schema's range for draft_predict_length, which the engine enforces too.
draft_length = whole_number(*_draft_length_bounds())
