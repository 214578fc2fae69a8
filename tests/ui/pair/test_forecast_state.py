"""The Pair page's phone forecast as state, without widgets: the table's cells against
the figures they come from, the offer to measure, the default phone, the phone's memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.units import format_bytes
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
from app.core.measure.phone_forecast import PhoneForecast, pair_forecast
from app.core.measure.phone_profiles import choose_device, device_names, pack_ref
from app.core.measure.phone_results import add_result
from app.ui.base.phone_profile import current_device, default_device, percent
from app.ui.pair.forecast_state import (
    BEST,
    NO_ACCEPTANCE,
    RECORDED,
    known_phone_ram,
    phone_memory,
    uplift_range,
    work_out,
)

Copy = Callable[..., Path]
PHONE = "Pixel 8"


def iid_tallies(a: float, rounds: int = 100_000, exact: bool = True) -> PositionTallies:
    """Tallies whose every position hits at rate `a` (counts rounded, as measured)."""
    reached, accepted, r = [], [], rounds
    for _ in range(6):
        hit = round(r * a)
        reached.append(r)
        accepted.append(hit)
        r = hit
    return PositionTallies(tuple(reached), tuple(accepted), exact, rounds)


@pytest.fixture
def pair(bundle_copy: Copy, tmp_path: Path) -> tuple[Path, Path]:
    return bundle_copy("fast-target", tmp_path / "t"), bundle_copy("fast-draft", tmp_path / "d")


def test_no_acceptance_yet_offers_to_measure(pair: tuple[Path, Path]) -> None:
    shown = work_out(*pair, device_names()[0])
    assert shown.needs_acceptance and shown.reason == NO_ACCEPTANCE
    assert not shown.rows and shown.best_row == -1
    assert "Chat" in shown.reason and "Measure" in shown.reason


def test_a_result_recorded_for_the_pair_comes_back_in_the_table(pair: tuple[Path, Path]) -> None:
    """Ground truth: one result of this very pair on the phone, at d = 3, 10.0 -> 14.0
    tok/s; the forecast fits that phone's steps to it, so its own length gives it back."""
    target, draft = pair
    add_position_tallies(target, draft, iid_tallies(0.7))
    add_result(PHONE, pack_ref(target), pack_ref(draft), 10.0, 14.0, 3)
    shown = work_out(target, draft, PHONE)
    assert not shown.reason and not shown.needs_acceptance
    assert shown.title == "Forecast on Pixel 8 (not measured on the phone)"
    assert [row[0] for row in shown.rows] == [f"d = {d}" for d in range(1, 7)]
    assert shown.rows[2][1:4] == ("10.0", "14.0", "+40 %")
    assert all(row[1] == "10.0" for row in shown.rows)  # plain does not depend on d
    forecast = pair_forecast(target, draft, PHONE)
    assert isinstance(forecast, PhoneForecast)
    for cells, row in zip(shown.rows, forecast.rows, strict=True):
        assert cells[2] == f"{row.spec_tok_s:.1f}"
        assert cells[4] == uplift_range(row.uplift_low, row.uplift_high)
    assert shown.best_draft_length == forecast.best_draft_length
    assert shown.rows[shown.best_row][5] == BEST
    assert sum(row[5] == BEST for row in shown.rows) == 1
    assert shown.assumptions == forecast.assumptions and shown.assumptions
    assert "100,000 tokens" in shown.source and "this computer" in shown.source
    assert "exactly" in shown.source


def test_low_precision_acceptance_is_said(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    add_position_tallies(target, draft, iid_tallies(0.6, exact=False))
    shown = work_out(target, draft, device_names()[0])
    assert "low precision (memory low)" in shown.source
    assert any('memory "low"' in words for words in shown.assumptions)


def test_percent_and_range_read_as_users_read_them() -> None:
    assert percent(0.3) == "+30 %"
    assert percent(-0.05) == "-5 %"
    assert percent(0.004) == "0 %"
    assert uplift_range(0.22, 0.38) == "+22 to +38 %"
    assert uplift_range(-0.1, 0.05) == "-10 to +5 %"


def test_the_default_phone_is_the_users_choice_else_the_first(pair: tuple[Path, Path]) -> None:
    assert default_device(["a", "b"], "b") == "b"
    assert default_device(["a", "b"], "gone") == "a"
    assert default_device([], None) is None
    names, device = current_device()
    assert device == names[0] and "published" in device  # no phone recorded yet
    target, draft = pair
    add_result(PHONE, pack_ref(target), pack_ref(draft), 10.0, 14.0, 3)
    assert current_device() == (device_names(), PHONE)  # the user's own phone first
    choose_device(names[1])
    assert current_device()[1] == names[1]


def test_the_phones_memory_names_the_phone_and_its_ram(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    ram = 8 * 1024**3
    fits = phone_memory(target, draft, PHONE, ram, "read from the attached phone")
    assert fits.level == "fits"
    assert fits.text.startswith(f"On {PHONE}: the pair needs ")
    assert fits.text.endswith(
        f" under its own recipes; the phone has {format_bytes(ram)} of RAM (read from the "
        "attached phone)."
    )
    assert fits.tip.startswith(f"Memory on {PHONE}: ")  # a push's words, every figure
    too_small = phone_memory(target, draft, PHONE, 1024, "stored with its recorded results")
    assert too_small.level == "too_big"
    assert too_small.text.startswith(f"On {PHONE}, not enough memory: the pair needs ")
    assert "Not enough memory on Pixel 8" in too_small.tip
    assert phone_memory(target, draft, PHONE, 0, "") == phone_memory(target, draft, None, ram, "")
    assert phone_memory(target, draft, PHONE, 0, "").text == ""


def test_a_recorded_phones_ram_is_known_without_the_phone(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    assert known_phone_ram(None, PHONE) == (None, 0, "")
    add_result(PHONE, pack_ref(target), pack_ref(draft), 10.0, 14.0, 3, phone_ram=12_000_000)
    add_result(PHONE, pack_ref(target), pack_ref(draft), 10.0, 13.0, 4)  # attached no more
    assert known_phone_ram(None, PHONE) == (PHONE, 12_000_000, RECORDED)
    assert known_phone_ram(None, "another phone") == (None, 0, "")
    assert known_phone_ram(None, None) == (None, 0, "")
