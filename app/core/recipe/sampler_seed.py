"""The seed a sampled decode draws with: the one asked for, else a fresh one chosen
before decoding starts, so it can be told (and typed again to repeat the draws)."""

from __future__ import annotations

import secrets

from app.core.recipe.sampler_settings import SamplerSettings


def draws(sampler: SamplerSettings | None) -> bool:
    """The sampler picks at random (so a seed matters); None is greedy."""
    return sampler is not None and not sampler.is_greedy


def seed_for(sampler: SamplerSettings | None, asked: int | None) -> int | None:
    """`asked`, else a fresh seed (short enough to retype); None when nothing is drawn."""
    if not draws(sampler):
        return None
    return asked if asked is not None else secrets.randbelow(2**32)
