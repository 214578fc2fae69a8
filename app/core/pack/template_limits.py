"""The limits a chat template renders under, and the checks every operator, output and
value it builds goes through (template_budget.py wires them into jinja2).

Each render has a deadline and a step budget (`tick`: loop iterations, calls, operators,
outputs); every value is sized *before* it is built (`allow`), and all a render builds
counts against one work budget (`charge`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from app.core.infra.errors import DraftDeckError

RENDER_SECONDS = 1.0  # a real chat template renders in about a millisecond
MAX_SOURCE_CHARS = 100_000  # the largest templates in the wild are ~20,000 characters
MAX_CHARS = 2_000_000  # any one value the template builds, and the prompt itself
MAX_WORK = 8 * MAX_CHARS  # everything it builds and outputs in one render, added up
MAX_STEPS = 1_000_000  # loop iterations, calls, operators and outputs
MAX_WIDTH = 10_000  # a padding width, format width or precision, batch or slice count
MAX_INT_BITS = 100_000  # a number `**` or `*` may make


class TemplateFailed(DraftDeckError):
    """The template could not be rendered: `why` says what happened, in words."""

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(why)


class TemplateRefused(TemplateFailed):
    """The template itself refused this conversation (`raise_exception`): it works,
    just not for these messages (Gemma's "System role not supported")."""


@dataclass
class Budget:
    deadline: float
    steps: int = 0
    work: int = 0


BUDGET: ContextVar[Budget | None] = ContextVar("template_budget", default=None)


def _current() -> Budget:
    budget = BUDGET.get()
    if budget is None:  # a compiled template is only ever run by `render`
        raise TemplateFailed("the template ran outside its budget")
    return budget


def tick() -> bool:
    """One step: a loop iteration, a call, an operator or an output."""
    budget = _current()
    budget.steps += 1
    if budget.steps > MAX_STEPS:
        raise TemplateFailed(f"it takes more than {MAX_STEPS:,} steps")
    if time.monotonic() > budget.deadline:
        raise TemplateFailed(f"it takes more than {RENDER_SECONDS:g} s")
    return True


def charge(size: int) -> None:
    budget = _current()
    budget.work += size
    if budget.work > MAX_WORK:
        raise TemplateFailed(f"it builds more than {MAX_WORK:,} characters in all")


def allow(size: int, what: str) -> None:
    """Refuse to build a value of `size` (characters or items) before building it."""
    if size > MAX_CHARS:
        raise TemplateFailed(f"{what} would make a value of more than {MAX_CHARS:,} characters")
    charge(size)


def size_of(value: Any, limit: int = MAX_CHARS, per_level: int = 0) -> int:
    """How big `value` is as data (characters of its strings, digits of its numbers,
    items of its containers, shared parts counted every time they appear: that is how
    str() or tojson would spell it), counting each nested item `per_level` more for
    each level it is nested at; stops early once past `limit`."""
    total = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        total += 1 + depth * per_level
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, int):  # True and False too: bit_length() // 3 is 0
            total += item.bit_length() // 3
        elif isinstance(item, range):
            total += len(item) * 7
        elif isinstance(item, Mapping):
            stack.extend((part, depth + 1) for pair in item.items() for part in pair)
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((part, depth + 1) for part in item)
        if total > limit:
            break
    return total


def check_size(value: Any, what: str) -> Any:
    allow(size_of(value), what)
    return value


def check_width(width: Any, what: str) -> None:
    if isinstance(width, int) and abs(width) > MAX_WIDTH:
        raise TemplateFailed(f"{what} {width:,} is over {MAX_WIDTH:,}")


# -- operators -------------------------------------------------------------------------

_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.)")
DIGITS = re.compile(r"\d+")


def percent(template: str, values: Any) -> str:
    """`template % values`, refused when a width or the result would be too big."""
    specs = [m for m in _PERCENT.finditer(template) if m.group(3) != "%"]
    parts = values if isinstance(values, tuple) else (values,)
    for spec in specs:
        for width in spec.group(1, 2):
            if width == "*":
                for part in parts:
                    check_width(part, "a format width")
            elif width:
                check_width(int(width), "a format width")
    largest = max([size_of(p) for p in parts] or [0])
    if isinstance(values, Mapping):
        largest = max([size_of(v) for v in values.values()] or [0])
    allow(len(template) + len(specs) * largest, "'%' formatting")
    return str(template % values)


def binop(operator: str, left: Any, right: Any) -> Any:
    tick()
    if operator == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, str | bytes | list | tuple) and isinstance(count, int):
                allow(size_of(seq) * max(count, 0), "'*'")
        if isinstance(left, int) and isinstance(right, int):
            _check_bits(left.bit_length() + right.bit_length(), "'*'")
        return left * right
    if operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0:
            _check_bits(max(left.bit_length() - 1, 1) * right, "'**'")
        return left**right
    if operator == "+":
        if not isinstance(left, int | float) or not isinstance(right, int | float):
            allow(size_of(left) + size_of(right), "'+'")
        return left + right
    if operator == "%":
        if isinstance(left, str):
            return percent(left, right)
        return left % right
    raise TemplateFailed(f"the operator {operator!r} is not bounded")


def _check_bits(bits: int, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise TemplateFailed(f"{what} would make a number of more than {MAX_INT_BITS:,} bits")


def concat(*parts: Any) -> str:
    """`a ~ b`: sized before any part becomes text."""
    tick()
    allow(sum(size_of(p) for p in parts), "'~'")
    return "".join(map(str, parts))


def out(value: Any) -> Any:
    """One piece of output (the template's text and every `{{ }}`), counted."""
    tick()
    text = value if isinstance(value, str) else str(check_size(value, "an output"))
    charge(len(text))
    return text
