"""One recipe key as DraftDeck knows it: type, allowed values, MNN's default, and why it
matters (schema.py lists them and checks recipes against them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DRAFT = "draft"
TARGET = "target"


@dataclass(frozen=True)
class Field:
    key: str
    # "choice", "int", "float", "bool", "path"; and the sampler's JSON shapes: "names"
    # (a list of names from `choices`), "ids" (a list of token ids), "bias" (an object
    # from token id to a number).
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    scopes: tuple[str, ...] = (DRAFT, TARGET)
    docs_note: str = ""
