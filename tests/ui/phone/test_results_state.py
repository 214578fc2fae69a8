"""The Phone page's recorded results as state, without widgets: a result's cells, how far
the forecast made before it was off, recording with that forecast, putting one back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
from app.core.measure.phone_forecast import PhoneForecast, pair_forecast
from app.core.measure.phone_profiles import device_names, pack_ref
from app.core.measure.phone_results import (
    RecordedForecast,
    add_result,
    delete_result,
    list_results,
)
from app.ui.phone.results_state import (
    NewResult,
    cells,
    forecast_tip,
    forecast_words,
    phone_choices,
    put_back,
    record,
    results_of,
    shown_results,
)

Copy = Callable[..., Path]
PHONE = "Pixel 8"
TALLIES = PositionTallies(
    (1000, 700, 490, 343, 240, 168), (700, 490, 343, 240, 168, 118), True, 5000
)


@pytest.fixture
def pair(bundle_copy: Copy, tmp_path: Path) -> tuple[Path, Path]:
    return bundle_copy("fast-target", tmp_path / "t"), bundle_copy("fast-draft", tmp_path / "d")


def test_a_results_cells_and_how_far_its_forecast_was_off(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    made = RecordedForecast("Some phone", 15.4, 0.4, 0.3, 0.5)
    result = add_result(
        PHONE, pack_ref(target), pack_ref(draft), 11.0, 14.0, 3, made, "2026-12-06T10:00:00+00:00"
    )
    shown = cells(result)
    assert shown[1:] == ("t + d", "3", "11.0 → 14.0 tok/s (+27 %)", "15.4 tok/s: 10 % too high")
    assert shown[0].startswith("2026-12-06")
    tip = forecast_tip(result)
    assert "Some phone" in tip and "+40 %" in tip and "+27 %" in tip
    assert "outside the likely range" in tip  # measured +27 %, forecast +30 to +50 %
    low = add_result(
        PHONE, pack_ref(target), pack_ref(draft), 11.0, 15.9, 3, made, "2026-12-06T11:00:00+00:00"
    )
    assert forecast_words(low) == "15.4 tok/s: 3 % too low"
    assert "inside the likely range" in forecast_tip(low)  # +45 %, forecast +30 to +50 %
    none = add_result(PHONE, pack_ref(target), pack_ref(draft), 10.0, 12.0, 2)
    assert forecast_words(none) == "none could be made then"
    assert "No forecast could be made" in forecast_tip(none)


def test_recording_keeps_the_forecast_made_just_before(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    add_position_tallies(target, draft, TALLIES)
    chosen = device_names()[0]  # no result for the phone yet: the chosen profile's
    expected = pair_forecast(target, draft, chosen)
    assert isinstance(expected, PhoneForecast)
    first = record(NewResult(PHONE, target, draft, 10.0, 14.0, 3, phone_ram=8_000_000_000))
    assert first.forecast == RecordedForecast(
        chosen,
        expected.row(3).spec_tok_s,
        expected.row(3).uplift,
        expected.row(3).uplift_low,
        expected.row(3).uplift_high,
    )
    assert first.phone_ram == 8_000_000_000
    # Now the phone has a profile of its own: the next forecast comes from it, and
    # at the same length it gives back the first result (one point fits exactly).
    second = record(NewResult(PHONE, target, draft, 10.0, 13.5, 3))
    assert second.forecast is not None and second.forecast.device == PHONE
    assert second.forecast.spec_tok_s == pytest.approx(14.0)
    assert forecast_words(second) == "14.0 tok/s: 4 % too high"
    beyond = record(NewResult(PHONE, target, draft, 10.0, 12.0, 8))  # no forecast past 6
    assert beyond.forecast is None
    assert [r.id for r in results_of(PHONE)] == [beyond.id, second.id, first.id]


def test_a_deleted_result_comes_back_as_it_was(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    made = RecordedForecast("Some phone", 15.4, 0.4, 0.3, 0.5)
    result = add_result(PHONE, pack_ref(target), pack_ref(draft), 11.0, 14.0, 3, made, None, 99)
    deleted = delete_result(result.id)
    assert deleted == result and list_results(PHONE) == []
    back = put_back(result)
    assert list_results(PHONE) == [back]
    assert (back.date, back.forecast, back.phone_ram, back.spec_tok_s) == (
        result.date,
        made,
        99,
        14.0,
    )


def test_the_phones_offered_put_the_attached_one_first(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    assert phone_choices(None) == [] and phone_choices("Pixel 9") == ["Pixel 9"]
    for phone, date in (
        ("Galaxy", "2026-12-05T10:00:00+00:00"),
        (PHONE, "2026-12-06T10:00:00+00:00"),
    ):
        add_result(phone, pack_ref(target), pack_ref(draft), 10.0, 14.0, 3, None, date)
    assert phone_choices(None) == [PHONE, "Galaxy"]  # the latest recorded first
    assert phone_choices("Galaxy") == ["Galaxy", PHONE]
    assert results_of(None) == []
    shown = shown_results(None, None)  # nothing attached, nothing asked: the latest phone
    assert shown[:2] == ([PHONE, "Galaxy"], PHONE) and len(shown[2]) == 1
    assert shown_results("Pixel 9", None)[:2] == (["Pixel 9", PHONE, "Galaxy"], "Pixel 9")
    assert shown_results("Pixel 9", "Galaxy")[1] == "Galaxy"
    assert shown_results(None, "gone")[1] == PHONE
    assert shown_results(None, None) == shown_results(None, PHONE)
    assert shown_results("Pixel 9", None)[2] == []
