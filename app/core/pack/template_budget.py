"""Render a pack's chat template under a budget: a file from a stranger must not hang,
exhaust memory or crash whatever reads it.

jinja2's ImmutableSandboxedEnvironment keeps a template away from Python's internals but
bounds nothing: `{% for a in range(100000) %}{% for b in range(100000) %}` runs for hours,
`'a' * 10**10` or `'{:>999999999}'.format(1)` allocates gigabytes, a self-recursive macro
raises RecursionError and `{{ 1/0 }}` ZeroDivisionError. Here every render has a deadline
and a step budget, checked on every loop iteration (each `For` body and loop test is
rewritten to call template_limits.tick first), every call, binary operator, filter and output; every
value the template builds is sized *before* it is built (`*`, `**`, `+`, `%`, `~`,
widths, `replace`, `join`...), and all it produces counts against one work budget.
Whatever goes wrong becomes `TemplateFailed` with the reason in words.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.visitor import NodeTransformer
from markupsafe import Markup

from app.core.pack import template_limits
from app.core.pack.template_checks import (
    BoundedEscapeFormatter,
    BoundedFormatter,
    bounded_filter,
    method_check,
)
from app.core.pack.template_limits import (
    BUDGET,
    MAX_CHARS,
    MAX_SOURCE_CHARS,
    RENDER_SECONDS,
    Budget,
    TemplateFailed,
    TemplateRefused,
    binop,
    check_size,
    tick,
)

__all__ = ["TemplateFailed", "TemplateRefused", "render"]


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox Hugging Face renders chat templates in (its whitespace rules and
    loop controls; MNN's jinja.cpp trims the same), with every operator that could
    build something big routed through `binop`."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self) -> None:
        super().__init__(
            trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
        )
        self.globals.pop("lipsum", None)  # lipsum(n) writes n paragraphs
        self.globals["raise_exception"] = _raise
        self.filters = {name: bounded_filter(name, f) for name, f in self.filters.items()}

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        return binop(operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        tick()
        for arg in (*args, *kwargs.values()):
            check_size(arg, "a call's argument")
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str | bytes):
            args = method_check(getattr(__obj, "__name__", ""), owner, args)
        result = super().call(__context, __obj, *args, **kwargs)
        return check_size(result, "a call")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        owner: str = value.__self__
        formatter: SandboxedFormatter = (
            BoundedEscapeFormatter(self, escape=owner.escape)
            if isinstance(owner, Markup)
            else BoundedFormatter(self)
        )
        if value.__name__ == "format_map":

            def format_map(mapping: Mapping[str, Any]) -> str:
                return str(formatter.vformat(owner, (), mapping))

            return format_map

        def format_(*args: Any, **kwargs: Any) -> str:
            return str(formatter.vformat(owner, args, kwargs))

        return format_


def _raise(message: Any) -> None:
    raise TemplateRefused(str(message))


class _Bounding(NodeTransformer):
    """Rewrites a parsed template so that every loop iteration, `~` and output goes
    through this module's checks (names the template itself cannot reach)."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.body.insert(0, nodes.ExprStmt(_call("tick")))
        if node.test is not None:
            node.test = nodes.And(_call("tick"), node.test)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _call("concat", *node.nodes)

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [_call("out", child) for child in node.nodes]
        return node


def _call(name: str, *args: nodes.Expr) -> nodes.Call:
    return nodes.Call(
        nodes.ImportedName(f"{template_limits.__name__}.{name}"), list(args), [], None, None
    )


@lru_cache(maxsize=1)
def _environment() -> BoundedEnvironment:
    return BoundedEnvironment()


@lru_cache(maxsize=32)
def _compiled(source: str) -> jinja2.Template | TemplateFailed:
    if len(source) > MAX_SOURCE_CHARS:
        return TemplateFailed(f"it is {len(source):,} characters long, over {MAX_SOURCE_CHARS:,}")
    env = _environment()
    try:
        tree = _Bounding().visit(env.parse(source))
        return env.from_string(tree)
    except jinja2.TemplateSyntaxError as exc:
        return TemplateFailed(f"line {exc.lineno}: {exc.message}")
    except Exception as exc:
        return TemplateFailed(_words(exc))


def render(source: str, context: Mapping[str, Any]) -> str:
    """The template rendered with `context`, within the budget; raises TemplateFailed
    (TemplateRefused when the template itself refuses these values)."""
    compiled = _compiled(source)
    if isinstance(compiled, TemplateFailed):
        raise TemplateFailed(compiled.why)
    budget = Budget(time.monotonic() + RENDER_SECONDS)
    token = BUDGET.set(budget)
    try:
        return _joined(compiled.generate(**context))
    except TemplateFailed:
        raise
    except Exception as exc:
        raise TemplateFailed(_words(exc)) from None
    finally:
        BUDGET.reset(token)


def _joined(pieces: Iterator[str]) -> str:
    kept: list[str] = []
    total = 0
    for piece in pieces:
        total += len(piece)
        if total > MAX_CHARS:
            raise TemplateFailed(f"its output passes {MAX_CHARS:,} characters")
        kept.append(piece)
    return "".join(kept)


def _words(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "it nests or recurses too deeply"
    if isinstance(exc, MemoryError):
        return "it runs out of memory"
    return str(exc) or type(exc).__name__
