"""The commands' documented defaults give results the commands themselves trust."""

from __future__ import annotations

from app.cli.main import build_parser
from app.core.measure.bench import MIN_RUN_SECONDS
from app.core.measure.intervals import median_interval


def test_bench_defaults_are_long_enough_to_trust() -> None:
    """With its defaults, bench must not warn about its own result: enough pairs for a
    95 % interval, and runs repeated past the length under which one is "too short"."""
    args = build_parser().parse_args(["bench", "--target", "T", "--draft", "D"])
    assert median_interval([float(i) for i in range(args.runs)]).met_level
    # Above the floor with room: the repeats are counted from a warm-up run.
    assert args.min_run_seconds >= 2 * MIN_RUN_SECONDS
