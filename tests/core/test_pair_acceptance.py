"""Acceptance tallies per pair: counts add up, two writers keep each other's counts, a
pair whose models changed starts again, the store stays bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.measure import pair_acceptance
from app.core.measure.metrics import ADAPTIVE, SEEDED, DecodeStats, RoundStats
from app.core.measure.pair_acceptance import (
    PositionTallies,
    add_position_tallies,
    add_tallies,
    read_tallies,
    store_path,
)
from app.core.measure.words import Mode
from tests.helpers.two_writers import run_two_writers


def stats_of(rounds: list[tuple[int, int]], d: int = 3, sampler: str = "greedy") -> DecodeStats:
    """A speculative run's stats from (drafted, accepted) rounds."""
    stats = DecodeStats(mode=Mode.SPECULATIVE, draft_length=d, sampler=sampler)
    for drafted, accepted in rounds:
        stats.add_round(RoundStats(drafted, accepted, accepted + 1, drafted, 0.01, 0.02))
    return stats


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    target, draft = tmp_path / "target", tmp_path / "draft"
    for pack in (target, draft):
        pack.mkdir()
        (pack / "llm.mnn.weight").write_bytes(b"w" * 10)
        (pack / "config.json").write_text('{"memory": "low"}')
    return target, draft


def test_counts_of_replies_add_up(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    add_tallies(target, draft, stats_of([(3, 3), (3, 1), (3, 0)]))
    add_tallies(target, draft, stats_of([(3, 2)]))
    tallies = read_tallies(target, draft)
    assert tallies is not None
    # Position 0: reached by all 4 rounds, accepted in 3; position 1: reached by 3 ...
    assert tallies.reached == (4, 3, 2)
    assert tallies.accepted == (3, 2, 1)
    assert tallies.tokens == (4 + 2 + 1) + 3
    assert tallies.rates == pytest.approx((0.75, 2 / 3, 0.5))
    assert tallies.exact is False  # the target's recipe says memory "low"


def test_sampled_plain_and_adaptive_replies_add_nothing(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    add_tallies(target, draft, stats_of([(3, 3)], sampler="mixed"))
    add_tallies(target, draft, DecodeStats(mode=Mode.PLAIN, draft_length=0))
    # Adaptive drafting cut its rounds where the draft was unsure: only confident tokens
    # reached the later positions.
    adaptive = stats_of([(3, 3), (1, 1)])
    adaptive.drafting = ADAPTIVE
    add_tallies(target, draft, adaptive)
    assert read_tallies(target, draft) is None
    seeded = stats_of([(3, 3)])
    seeded.drafting = SEEDED  # fixed lengths: the seed asked for them
    add_tallies(target, draft, seeded)
    assert read_tallies(target, draft) is not None


def test_exact_counts_are_kept_apart_and_preferred(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    add_tallies(target, draft, stats_of([(2, 0)] * 5, d=2))
    add_tallies(target, draft, stats_of([(2, 2)], d=2), exact=True)
    tallies = read_tallies(target, draft)
    assert tallies is not None and tallies.exact and tallies.reached == (1, 1)


def test_a_pair_whose_models_changed_starts_again(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    add_tallies(target, draft, stats_of([(3, 3)]))
    (target / "config.json").write_text('{"memory": "low", "thread_num": 1}')  # a recipe
    (target / "config.json.bak").write_text('{"memory": "low"}')  # as a recipe save leaves
    (draft / ".draftdeck-this-computer.json").write_text("{}")
    assert read_tallies(target, draft) is not None
    (draft / "llm.mnn.weight").write_bytes(b"other weights")
    assert read_tallies(target, draft) is None
    add_tallies(target, draft, stats_of([(3, 0)]))
    tallies = read_tallies(target, draft)
    assert tallies is not None and tallies.reached == (1, 0, 0)


def test_the_store_keeps_the_latest_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pair_acceptance, "MAX_PAIRS", 3)
    one = PositionTallies((1,), (1,), True, 2)
    for i in range(5):
        (tmp_path / f"t{i}").mkdir()
        add_position_tallies(tmp_path / f"t{i}", tmp_path / "d", one)
    kept = json.loads(store_path().read_text())["pairs"]
    assert len(kept) == 3
    assert read_tallies(tmp_path / "t0", tmp_path / "d") is None
    assert read_tallies(tmp_path / "t4", tmp_path / "d") is not None


def test_a_broken_store_is_set_aside(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    store_path().parent.mkdir(parents=True, exist_ok=True)
    store_path().write_text("{not json")
    assert read_tallies(target, draft) is None
    add_tallies(target, draft, stats_of([(3, 1)]))
    assert store_path().with_name(store_path().name + ".broken").read_text() == "{not json"
    assert read_tallies(target, draft) is not None


WRITER = """
import sys
from pathlib import Path
from app.core.measure.pair_acceptance import PositionTallies, add_position_tallies
target, draft, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
for _ in range(n):
    add_position_tallies(target, draft, PositionTallies((2, 1), (1, 1), True, 3))
"""


def test_two_writers_keep_each_others_counts(pair: tuple[Path, Path], draftdeck_home: Path) -> None:
    target, draft = pair
    run_two_writers(WRITER, [str(target), str(draft), "25"], draftdeck_home)
    tallies = read_tallies(target, draft)
    assert tallies is not None
    assert tallies.reached == (2 * 25 * 2, 2 * 25)
    assert tallies.accepted == (2 * 25, 2 * 25)
    assert tallies.tokens == 2 * 25 * 3
