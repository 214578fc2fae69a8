"""Chat's phone forecast line: a greedy speculative reply's tallies feed the pair's
acceptance, and its figures gain what the pair is forecast to do on the chosen phone,
apart from this computer's measured figures; a sampled reply feeds nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.measure.pair_acceptance import read_tallies
from app.core.measure.phone_forecast import ForecastRow, PhoneForecast, pair_forecast
from app.core.measure.phone_profiles import choose_device, pack_ref
from app.core.measure.phone_results import add_result
from app.core.recipe.drafting_settings import FIXED_DRAFTING, write_drafting
from app.ui.chat.chat_forecast import ADAPTIVE_TIP, SAMPLED_TIP, forecast_line
from app.ui.chat.chat_sampling import RECIPE_INDEX
from tests.helpers.windows import chat_window, recipe_update, send

Copy = Callable[..., Path]
PAIR = ("fast-target", "fast-draft")


def _forecast(best: int) -> PhoneForecast:
    rows = tuple(
        ForecastRow(d, 10.0, 10.0 + d, d / 10, d / 10 - 0.05, d / 10 + 0.05) for d in range(1, 7)
    )
    return PhoneForecast("Pixel 8", rows, best, ("an assumption",))


def test_the_line_at_the_recipes_length_names_the_best_when_it_differs() -> None:
    line = forecast_line(_forecast(best=3), 3, greedy=True)
    assert line.text == "On Pixel 8: about 13.0 tok/s at d = 3 (+30 %, forecast)"
    assert "not measured on it" in line.tip and "this computer's, measured" in line.tip
    assert "plain 10.0 tok/s" in line.tip and "likely +25 % to +35 %" in line.tip
    assert SAMPLED_TIP not in line.tip
    other = forecast_line(_forecast(best=5), 2, greedy=False)
    assert other.text == "On Pixel 8: about 12.0 tok/s at d = 2 (+20 %, forecast); best there d = 5"
    assert other.tip.endswith(SAMPLED_TIP)
    no_recipe = forecast_line(_forecast(best=4), None, greedy=True)
    assert no_recipe.text.startswith("On Pixel 8: about 14.0 tok/s at d = 4 (+40 %")
    assert "the best draft length there (d = 4)" in no_recipe.tip


def _recorded(root: Path) -> None:
    recipe_update(PAIR[0], {"draft_predict_length": 3})(root)
    # Fixed drafting: an adaptive reply's counts do not feed the forecast (see below).
    write_drafting(root / PAIR[1], FIXED_DRAFTING)
    target, draft = pack_ref(root / PAIR[0]), pack_ref(root / PAIR[1])
    add_result("Pixel 8", target, draft, 10.0, 14.0, 3)  # this very pair on the phone
    choose_device("Pixel 8")


def test_a_greedy_reply_feeds_the_tallies_and_shows_the_phone(
    qtbot: QtBot, bundle_copy: Copy
) -> None:
    with chat_window(qtbot, bundle_copy, PAIR, prepare=_recorded) as window:
        page = window.chat_page
        root = window.library.root
        pair = (root / PAIR[0], root / PAIR[1])
        assert read_tallies(*pair) is None
        send(qtbot, window, "Hello there")
        reply = page.transcript.messages[-1]
        qtbot.waitUntil(lambda: reply.phone_line is not None, timeout=20_000)
        assert reply.phone_line is not None
        text, tip = reply.phone_line
        # Ground truth: the phone's own result at d = 3 for this pair, given back.
        best = pair_forecast(*pair, "Pixel 8")
        assert isinstance(best, PhoneForecast)
        suffix = "" if best.best_draft_length == 3 else f"; best there d = {best.best_draft_length}"
        assert text == f"On Pixel 8: about 14.0 tok/s at d = 3 (+40 %, forecast){suffix}"
        assert "the recipe's draft length (d = 3)" in tip and SAMPLED_TIP not in tip
        tallies = read_tallies(*pair)
        assert tallies is not None and reply.stats is not None
        assert tallies.reached[0] == reply.stats["position_reached"][0]
        assert tallies.tokens == reply.stats["tokens"] - 1  # the prefill's token is not a round's
        html = page.transcript.toHtml()
        assert "On Pixel 8: about 14.0 tok/s" in html
        # Below this computer's measured figures, as a line of its own.
        plain = page.transcript.toPlainText()
        figures_at = plain.index(f"{reply.stats['tokens']} tokens")
        assert plain.index("On Pixel 8: about") > figures_at

        assert not page.adaptive.isChecked()
        page.adaptive.click()  # adaptive: its rounds stop where the draft is unsure
        send(qtbot, window, "Tell me more")
        adaptive = page.transcript.messages[-1]
        qtbot.waitUntil(lambda: adaptive.phone_line is not None, timeout=20_000)
        assert adaptive.phone_line is not None
        assert adaptive.phone_line[1].endswith(ADAPTIVE_TIP)
        assert read_tallies(*pair) == tallies  # the adaptive reply added nothing

        page.sampling.choice.setCurrentIndex(RECIPE_INDEX)  # sampled: no greedy tally
        assert not page.sampling.greedy_chosen
        send(qtbot, window, "And again")
        sampled = page.transcript.messages[-1]
        qtbot.waitUntil(lambda: sampled.phone_line is not None, timeout=20_000)
        assert sampled.phone_line is not None and sampled.phone_line[1].endswith(SAMPLED_TIP)
        assert read_tallies(*pair) == tallies  # the sampled reply added nothing
