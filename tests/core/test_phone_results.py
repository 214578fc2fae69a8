"""Recorded phone results: kept per phone, listed, deleted, each with the forecast made
before it; two writers keep each other's results; profiles and the chosen device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.infra.errors import UsageError
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
from app.core.measure.phone_forecast import PhoneForecast, pair_forecast, record_result
from app.core.measure.phone_profiles import (
    choose_device,
    chosen_device,
    device_names,
    named_device,
    profile_for,
    published_profiles,
)
from app.core.measure.phone_results import delete_result, list_results, phones, store_path
from app.core.pack.weight_bytes import bytes_per_token
from tests.helpers.two_writers import run_two_writers

PHONE = "SM-S948B"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    target, draft = tmp_path / "target", tmp_path / "draft"
    for pack, size in ((target, 4000), (draft, 400)):
        pack.mkdir()
        (pack / "llm.mnn.weight").write_bytes(b"w" * size)
        (pack / "embeddings_bf16.bin").write_bytes(b"e" * 99)  # one row a token: not counted
    add_position_tallies(target, draft, PositionTallies((1000, 800), (800, 560), True, 3000))
    return target, draft


def test_results_are_kept_per_phone_listed_and_deleted(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    first = record_result(PHONE, target, draft, 10.0, 13.0, 3)
    assert first.forecast is None  # nothing was known of this phone before it
    assert first.target.bytes == 4000 and first.draft.name == "draft"
    record_result("Pixel 9", target, draft, 20.0, 22.0, 2)
    second = record_result(PHONE, target, draft, 10.2, 13.5, 2)
    assert [r.id for r in list_results(PHONE)] == [first.id, second.id]
    assert phones()[0] in (PHONE, "Pixel 9") and set(phones()) == {PHONE, "Pixel 9"}
    # The second result's forecast came from the first alone: d=3's own round costs.
    assert second.forecast is not None and second.forecast.device == PHONE
    assert second.forecast_error is not None
    assert second.forecast_error == pytest.approx(second.forecast.spec_tok_s / 13.5 - 1)
    deleted = delete_result(first.id)
    assert deleted is not None and deleted.id == first.id
    assert [r.id for r in list_results(PHONE)] == [second.id]
    assert delete_result("no-such-id") is None


def test_a_recorded_forecast_is_the_one_made_before(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    record_result(PHONE, target, draft, 10.0, 13.0, 3)
    before = pair_forecast(target, draft, PHONE)
    assert isinstance(before, PhoneForecast)
    result = record_result(PHONE, target, draft, 10.0, 12.0, 2)
    assert result.forecast is not None
    assert result.forecast.spec_tok_s == pytest.approx(before.row(2).spec_tok_s)
    # The recorded phone now has its own profile, first among the devices.
    assert device_names()[0] == PHONE
    profile = profile_for(PHONE)
    assert profile is not None and profile.recorded and len(profile.results) == 2


def test_figures_no_phone_gives_are_refused(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    for plain, spec, d in ((0.0, 5.0, 3), (5.0, float("nan"), 3), (5.0, 6.0, 0)):
        with pytest.raises(UsageError):
            record_result(PHONE, target, draft, plain, spec, d)
    with pytest.raises(UsageError):
        record_result("  ", target, draft, 5.0, 6.0, 3)
    assert list_results() == []


def test_hand_edited_entries_that_are_not_results_are_left_out(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    record_result(PHONE, target, draft, 10.0, 13.0, 3)
    data = json.loads(store_path().read_text())
    data["phones"][PHONE].append({"id": "x", "plain_tok_s": "fast"})
    data["phones"]["other"] = "not a list"
    store_path().write_text(json.dumps(data))
    assert len(list_results()) == 1


def test_bytes_per_token_leave_out_the_embedding_file(pair: tuple[Path, Path]) -> None:
    target, _ = pair
    assert bytes_per_token(target) == 4000
    (target / "embeddings_int4.bin").write_bytes(b"q" * 50)  # tied: it is the lm_head
    assert bytes_per_token(target) == 4050
    assert bytes_per_token(target / "missing") is None


def test_published_profiles_are_all_usable_and_named() -> None:
    names = [p.name for p in published_profiles()]
    assert len(names) == 6 and len(set(names)) == 6
    for profile in published_profiles():
        assert profile.source and "2026" in profile.source
        assert all(r.target_bytes and r.draft_bytes for r in profile.results)
    card = profile_for("RedMagic SM8850 (20k draft card, published)")
    assert card is not None and card.results[0].rates == (0.7178,)
    assert (card.results[0].plain_tok_s, card.results[0].spec_tok_s) == (13.9, 18.1)


def test_the_chosen_device_is_kept_in_the_settings() -> None:
    assert chosen_device() is None
    choose_device("Samsung S26 Ultra (SM8850, published)")
    assert chosen_device() == "Samsung S26 Ultra (SM8850, published)"
    choose_device(None)
    assert chosen_device() is None


def test_a_device_is_named_by_the_start_of_one_name_only() -> None:
    assert named_device("redmagic 11") == "RedMagic 11 Pro (SM8850, published)"
    assert named_device("Xiaomi Pad 7 Pro (SM8635, published)") == (
        "Xiaomi Pad 7 Pro (SM8635, published)"
    )
    assert named_device("RedMagic") is None  # two profiles start so
    assert named_device("Pixel") is None


WRITER = """
import sys
from app.core.measure.phone_results import PackRef, add_result
ref = PackRef("p", "/nowhere/p", "", None)
for i in range(int(sys.argv[1])):
    add_result(sys.argv[2], ref, ref, 10.0, 12.0, 3)
"""


def test_two_writers_keep_each_others_results(draftdeck_home: Path) -> None:
    run_two_writers(WRITER, ["15", PHONE], draftdeck_home)
    assert len(list_results(PHONE)) == 30
    assert len({r.id for r in list_results(PHONE)}) == 30


def test_a_profile_is_made_of_the_latest_results(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.measure import phone_profiles

    target, draft = pair
    monkeypatch.setattr(phone_profiles, "MAX_PROFILE_RESULTS", 2)
    for spec in (11.0, 12.0, 13.0):
        record_result(PHONE, target, draft, 10.0, spec, 3)
    profile = profile_for(PHONE)
    assert profile is not None
    assert [r.spec_tok_s for r in profile.results] == [12.0, 13.0]
    assert len(list_results(PHONE)) == 3  # all still listed
