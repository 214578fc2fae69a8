"""The time left of a long prompt's reading, on a clock the test moves."""

from __future__ import annotations

import pytest

from app.core.measure.prefill_pace import PrefillPace, prefill_words


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_time_left_is_the_pace_since_the_models_mark() -> None:
    clock = Clock()
    pace = PrefillPace(clock)
    pace.mark("target")  # the reply was asked for: the target starts from nothing
    clock.now += 2.0
    assert pace.seconds_left("target", 1_000, 3_000) == pytest.approx(4.0)
    # The draft has no mark: its first report only starts its clock.
    assert pace.seconds_left("draft", 500, 3_000) is None
    clock.now += 1.0
    assert pace.seconds_left("draft", 1_000, 3_000) == pytest.approx(4.0)
    pace.forget()
    assert pace.seconds_left("target", 2_000, 3_000) is None


def test_prefill_words_say_tokens_model_and_time_left() -> None:
    assert (
        prefill_words("target", 1_024, 2_980, 12.2)
        == "Reading the prompt: 1,024 / 2,980 tokens (target), about 12 s left"
    )
    assert (
        prefill_words("draft", 64, 2_980, None) == "Reading the prompt: 64 / 2,980 tokens (draft)"
    )


def test_a_prompt_read_to_the_end_has_no_time_left() -> None:
    assert (
        prefill_words("target", 3301, 3301, 0.0)
        == "Reading the prompt: 3,301 / 3,301 tokens (target)"
    )
