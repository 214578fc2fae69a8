"""Which saved recipe keys need the pair loaded again (core/recipe/key_timing.py)."""

from __future__ import annotations

import pytest

from app.core.recipe.key_timing import PER_REPLY_KEYS, load_time_changes
from app.core.recipe.sampler_fields import OLDER_SPELLINGS

LOADED = {"max_all_tokens": 2048, "memory": "low", "temperature": 0.8, "thread_num": 1}


@pytest.mark.parametrize(
    ("saved", "changed"),
    [
        ({**LOADED, "max_all_tokens": 700}, ["max_all_tokens"]),
        ({**LOADED, "memory": "normal", "thread_num": 2}, ["memory", "thread_num"]),
        ({**LOADED, "draft_predict_length": 2}, ["draft_predict_length"]),  # added
        ({k: v for k, v in LOADED.items() if k != "max_all_tokens"}, ["max_all_tokens"]),
        ({**LOADED, "max_all_tokens": None}, ["max_all_tokens"]),  # null is not absent
        ({**LOADED, "some_future_key": 1}, ["some_future_key"]),  # MNN may read it
        ({**LOADED, "temperature": 0.3, "top_k": 5, "topK": 7}, []),  # read per reply
        (LOADED, []),
    ],
)
def test_load_time_changes(saved: dict[str, object], changed: list[str]) -> None:
    assert load_time_changes(LOADED, saved) == changed


def test_every_sampler_key_is_read_per_reply_and_nothing_else_is() -> None:
    assert {"sampler_type", "mixed_samplers", "temperature", "logit_bias"} <= PER_REPLY_KEYS
    assert set(OLDER_SPELLINGS) | set(OLDER_SPELLINGS.values()) <= PER_REPLY_KEYS
    load_time = {"max_all_tokens", "max_new_tokens", "draft_predict_length", "memory"}
    assert not load_time & PER_REPLY_KEYS
