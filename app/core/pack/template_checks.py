"""Bounds for what a template calls: jinja2's filters, str methods and str.format, each
refused before it would build more than the limits allow (template_limits.py)."""

from __future__ import annotations

import inspect
import string
from collections.abc import Callable, Iterable, Mapping
from functools import update_wrapper
from typing import Any

from jinja2.sandbox import SandboxedEscapeFormatter, SandboxedFormatter

from app.core.pack.template_limits import (
    DIGITS,
    TemplateFailed,
    allow,
    charge,
    check_size,
    check_width,
    percent,
    size_of,
    tick,
)


def method_check(name: str, owner: str | bytes, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Methods of str (and bytes) that make more than they are given: refused when
    too big; the arguments to call them with (an iterator to join becomes a list)."""
    first = args[0] if args else None
    if name in ("center", "ljust", "rjust", "zfill"):
        check_width(first, f"a {name} width")
    elif name == "expandtabs":
        check_width(first, "a tab size")
        tabs = owner.count(b"\t") if isinstance(owner, bytes) else owner.count("\t")
        allow(len(owner) + tabs * (first if isinstance(first, int) else 8), name)
    elif name == "replace" and len(args) >= 2:
        allow(_replaced_size(owner, args[0], args[1], args[2] if len(args) > 2 else -1), name)
    elif name == "join" and isinstance(first, Iterable):
        items = list(first)
        allow(sum(size_of(i) for i in items) + len(owner) * len(items), "join")
        return (items, *args[1:])
    elif name == "translate" and isinstance(first, Mapping):
        widest = max([size_of(v) for v in first.values()] or [1])
        allow(len(owner) * widest, "translate")
    return args


def _replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    if not (isinstance(text, str | bytes) and isinstance(old, type(text))):
        return size_of(text)
    found = len(text) + 1 if not old else text.count(old)  # type: ignore[arg-type]
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * max(size_of(new) - len(old), 0)


_FILTER_CHECKS: dict[str, Callable[[inspect.BoundArguments], None]] = {
    "center": lambda a: check_width(a.arguments.get("width"), "a center width"),
    "batch": lambda a: check_width(a.arguments.get("linecount"), "a batch size"),
    "slice": lambda a: check_width(a.arguments.get("slices"), "a slice count"),
    "tojson": lambda a: allow(size_of(a.arguments["value"], per_level=_indent(a)), "tojson"),
    "indent": lambda a: allow(
        size_of(a.arguments["s"])
        + (str(a.arguments["s"]).count("\n") + 1) * _width_of(a.arguments.get("width")),
        "indent",
    ),
    "wordwrap": lambda a: allow(
        size_of(a.arguments["s"])
        * (1 + len(str(a.arguments.get("wrapstring") or "\n")))
        // max(_width_of(a.arguments.get("width")), 1)
        + size_of(a.arguments["s"]),
        "wordwrap",
    ),
    "replace": lambda a: allow(
        _replaced_size(
            str(a.arguments["s"]),
            a.arguments["old"],
            a.arguments["new"],
            a.arguments.get("count"),
        ),
        "replace",
    ),
    "join": lambda a: allow(
        sum(size_of(i) for i in a.arguments["value"])
        + size_of(a.arguments.get("d")) * len(a.arguments["value"]),
        "join",
    ),
    "sum": lambda a: _numbers_only(a.arguments.get("start")),
}
# Filters whose iterable argument is read twice (sized, then used): made a list first.
_MATERIALIZED = {"join": "value", "sum": "iterable"}


def _indent(arguments: inspect.BoundArguments) -> int:
    indent = arguments.arguments.get("indent")
    check_width(indent, "a tojson indent")
    return indent if isinstance(indent, int) else len(indent) if isinstance(indent, str) else 0


def _width_of(width: Any) -> int:
    if isinstance(width, str):
        check_width(len(width), "an indent")
        return len(width)
    check_width(width, "an indent")
    return width if isinstance(width, int) else 4


def _numbers_only(start: Any) -> None:
    # Summing lists is quadratic and sized only once done: templates add numbers.
    if not isinstance(start, int | float):
        raise TemplateFailed("sum adds only numbers here")


def bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(function)
    check = _FILTER_CHECKS.get(name)
    materialize = _MATERIALIZED.get(name)

    def bounded(*args: Any, **kwargs: Any) -> Any:
        tick()
        for arg in args:
            check_size(arg, f"the {name} filter's input")
        if check is not None:
            bound = signature.bind(*args, **kwargs)
            if materialize and isinstance(bound.arguments.get(materialize), Iterable):
                bound.arguments[materialize] = list(bound.arguments[materialize])
            check(bound)
            args, kwargs = bound.args, bound.kwargs
        if name == "format":
            return percent(str(args[0]), kwargs or args[1:])
        return check_size(function(*args, **kwargs), f"the {name} filter")

    return update_wrapper(bounded, function)


class _FieldBudget(string.Formatter):
    """str.format: every field's width and size checked before it is made."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        tick()
        for width in DIGITS.findall(format_spec):
            check_width(int(width), "a format width")
        check_size(value, "a format field")
        text = super().format_field(value, format_spec)
        charge(len(text))
        return text


class BoundedFormatter(_FieldBudget, SandboxedFormatter):
    """`str.format` in the sandbox, each field charged to the render's budget."""


class BoundedEscapeFormatter(_FieldBudget, SandboxedEscapeFormatter):
    """`Markup.format` in the sandbox, each field charged to the render's budget."""
