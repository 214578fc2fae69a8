"""Access to the plain files in the top-level `resources` package."""

from __future__ import annotations

import sys
from importlib import resources

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:
    from importlib.abc import Traversable


def resource(*parts: str) -> Traversable:
    node = resources.files("resources")
    for part in parts:
        node = node / part
    return node


def read_text(*parts: str) -> str:
    return str(resource(*parts).read_text(encoding="utf-8"))
