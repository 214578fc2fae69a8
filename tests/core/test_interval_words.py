"""One wording of an interval wherever one is shown, at the level it really has: the
verdict, the Apply line, the command's rows, the bench's table and a pack's card all
word it through intervals.interval_words."""

from __future__ import annotations

from app.cli.tune import format_rows
from app.core.measure.intervals import interval_words, level_words, median_interval
from app.core.measure.tune_results import rows, verdict_sentence
from app.core.packmaking.measured import not_paying_reason, uplift_words
from tests.helpers.tune_results import setting_result

TIMES, TO = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}"


def test_the_level_said_is_the_level_reached_never_more() -> None:
    # Six pairs reach 96.9 %: said as the 95 % it promises; fewer, the level they have,
    # rounded down (five pairs: 93.75 %, said 93 %, not 94 %).
    assert level_words(median_interval([1.0] * 6).level) == "95 %"
    assert level_words(median_interval([1.0] * 5).level) == "93 %"
    assert level_words(median_interval([1.0] * 4).level) == "87 %"
    assert level_words(0.0) == "0 %"
    assert interval_words(0.7, 0.97, 0.969) == f"95 % interval 0.70{TO}0.97{TIMES}"
    assert interval_words(0.7, 0.97, 0.875) == f"87 % interval 0.70{TO}0.97{TIMES}"
    assert interval_words(0.7, 0.97, 0.99, disturbed=True) == (
        f"interval 0.70{TO}0.97{TIMES} while the machine was disturbed (not 95 %)"
    )
    assert interval_words(1.1, 1.4, 0.875, bounds="+10% to +40%") == ("87 % interval +10% to +40%")


def test_every_place_words_a_short_interval_at_its_level() -> None:
    few = setting_result(3, 0.9, 0.7, 0.97, uplift_interval_level=0.875)
    said = f"87 % interval 0.70{TO}0.97{TIMES}"
    assert said in verdict_sentence([few])
    assert said in not_paying_reason(few)
    assert "87 % interval -30% to -3%" in uplift_words(few)
    assert "[87 % interval 0.700-0.970]" in format_rows(rows([few]))[0]
    for text in (verdict_sentence([few]), not_paying_reason(few), uplift_words(few)):
        assert "95 %" not in text and "too few" not in text
