"""Dataclasses to JSON values and back, checked against their type hints.

`to_json` turns a dataclass (nested ones, tuples and lists too) into plain JSON
values; a class with its own `to_json()` method is written by it. `from_json` builds a
dataclass from a parsed JSON object and raises TypedJsonError naming the field that is
missing or of the wrong type. Unknown keys are errors, except in classes that write
themselves (their `to_json()` adds derived keys that are read back as nothing).
Supported hints: int, float (an int is taken), str, bool, None, unions, tuple[X, ...],
tuple[X, Y] (fixed length),
list[X], dict[...] (any JSON object), Enum classes (read from their values) and dataclasses.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar, Union

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


class TypedJsonError(ValueError):
    """A JSON value that does not fit the type it is read as."""


_PLAIN = (str, int, float, bool, type(None))


def to_json(value: Any) -> Any:
    # Plain values, tuples and lists first, by their exact type: a saved chat's reply
    # is thousands of (text, from draft) pairs, and asking each for a to_json method
    # took 15 ms at 3,000 tokens (2 ms so). Subclasses (str enums) go the long way.
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is tuple or kind is list:
        return [to_json(v) for v in value]
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    return value


def from_json(cls: type[T], data: dict[str, Any]) -> T:
    hints = _hints(cls)
    if not hasattr(cls, "to_json"):
        unknown = sorted(set(data) - set(hints))
        if unknown:
            raise TypedJsonError(f"unknown field {unknown[0]!r}")
    values = {}
    for field in dataclasses.fields(cls):
        if field.name in data:
            values[field.name] = _check(data[field.name], hints[field.name], field.name)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise TypedJsonError(f"missing field {field.name!r}")
    return cls(**values)


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _check(value: Any, hint: Any, where: str) -> Any:
    """`value` as the type `hint` names, or a TypedJsonError naming the field."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        for option in args:
            try:
                return _check(value, option, where)
            except TypedJsonError:
                continue
        raise _wrong(where, value, hint)
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise _wrong(where, value, hint)
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            # A fixed-length tuple: tuple[int, float] is a pair, item by item.
            if len(value) != len(args):
                raise _wrong(where, value, hint)
            return tuple(
                _check(v, a, f"{where}[{i}]")
                for i, (v, a) in enumerate(zip(value, args, strict=True))
            )
        items = [_check(v, args[0], f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise _wrong(where, value, hint)
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise _wrong(where, value, hint)
        try:
            return from_json(hint, value)
        except TypedJsonError as exc:
            raise TypedJsonError(f"{where}: {exc}") from None
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            raise _wrong(where, value, hint) from None
    if hint is type(None):
        ok = value is None
    elif hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    if not ok:
        raise _wrong(where, value, hint)
    return value


def _wrong(where: str, value: Any, hint: Any) -> TypedJsonError:
    name = getattr(hint, "__name__", None) or str(hint)
    return TypedJsonError(f"field {where!r} must be {name}, not {value!r}"[:300])
