"""How many tokens a pack can hold: its prompt and reply together.

Two limits apply, and the window is the smaller:
- the recipe's `max_all_tokens` (MNN's llmconfig.hpp, default 2048): MNN's own generate
  loop stops there, and the memory estimate plans the KV cache for it. DraftDeck's
  draft/verify loop calls forward() itself, so it must stop there on its own;
- the model's trained positions: `max_position_embeddings` when the exporter wrote it
  into llm_config.json, else the well-known model's (resources/known_models.json).
  Past them a model produces garbage, slowly, with ever more memory.
Neither known to be sane, `CONTEXT_BOUND` caps the window: a recipe asking for 10^30
tokens must not plan a KV cache (or a loop) for them.
A pair's window is the smaller of its two models'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MNN_DEFAULT_MAX_ALL_TOKENS = 2048
# 2^20: above the longest window of any model MNN runs (Qwen2.5-1M: 1,010,000).
CONTEXT_BOUND = 1 << 20
RECIPE, MODEL, BOUND = "recipe", "model", "bound"


@dataclass(frozen=True)
class ContextWindow:
    tokens: int  # what fits: prompt plus reply
    recipe_limit: int  # max_all_tokens as the recipe has it (or MNN's default)
    model_limit: int | None  # the model's trained positions, when known
    model_source: str | None  # where model_limit comes from, in words

    @property
    def limited_by(self) -> str:
        if self.tokens == self.recipe_limit:
            return RECIPE
        if self.tokens == self.model_limit:
            return MODEL
        return BOUND

    def under(self, recipe: Mapping[str, Any]) -> ContextWindow:
        """The same model's window when it runs with `recipe`."""
        return context_window(recipe, self.model_limit, self.model_source)

    def describe(self) -> str:
        """In words, for the details, `info` and the Pair card."""
        words = f"{self.tokens:,} tokens"
        if self.limited_by == MODEL:
            return f"{words} (the model's trained window; the recipe allows {self.recipe_limit:,})"
        model = f"; the model was trained for {self.model_limit:,}" if self.model_limit else ""
        if self.limited_by == BOUND:
            model = model or " and the model's trained window is unknown"
            allows = f"the recipe allows {self.recipe_limit:,}{model}"
            return f"{words} (DraftDeck's upper bound: {allows})"
        return f"{words} (the recipe's max_all_tokens{model})"

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "recipe_limit": self.recipe_limit,
            "model_limit": self.model_limit,
            "model_source": self.model_source,
            "limited_by": self.limited_by,
        }


def recipe_limit(recipe: Mapping[str, Any]) -> int:
    value = recipe.get("max_all_tokens")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return MNN_DEFAULT_MAX_ALL_TOKENS


def context_window(
    recipe: Mapping[str, Any], model_limit: int | None, model_source: str | None
) -> ContextWindow:
    limit = recipe_limit(recipe)
    tokens = min(limit, model_limit or limit, CONTEXT_BOUND)
    return ContextWindow(tokens, limit, model_limit, model_source)


def pair_window(target: ContextWindow, draft: ContextWindow | None) -> ContextWindow:
    """The smaller window: both caches must hold the whole conversation."""
    if draft is None or target.tokens <= draft.tokens:
        return target
    return draft
