"""What a draft step costs beside a target step (c), as the Pair page and `check` say
it: estimated from the bytes of weights each model reads per token (the files as
stored), said to be an estimate, and replaced by the c measured on this computer once
the pair has run here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.measure.bench import RunPair, summarize
from app.core.measure.bench_summary import PairFigures
from app.core.measure.metrics import DecodeStats
from app.core.measure.pair_cost import (
    BY_BENCH,
    BY_TUNE,
    read_cost,
    record_cost,
    store_path,
    with_measured_cost,
)
from app.core.measure.words import Mode
from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess, assess_paths
from app.core.pack.draft_cost import COST_CODES, ESTIMATED
from app.core.pack.verdict import COMPATIBLE, INFO, WARNING, WARNINGS, Reason, Verdict

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]


def _weight_bytes(pack: Path) -> int:
    """Ground truth from the files: the weight file and any embeddings_int*.bin."""
    files = [pack / "llm.mnn.weight", *pack.glob("embeddings_int*.bin")]
    return sum(f.stat().st_size for f in files)


def _cost(verdict: Verdict) -> Reason:
    (found,) = [r for r in verdict.reasons if r.code in COST_CODES]
    return found


def _figures(target_step: float, draft_step: float) -> PairFigures:
    """What a bench summarises from runs whose steps took these seconds."""
    plain = DecodeStats(Mode.PLAIN, 0, rounds=100, tokens=100, decode_seconds=100 * target_step)
    plain.target_seconds, plain.target_forwards = 100 * target_step, 100
    spec = DecodeStats(Mode.SPECULATIVE, 2, rounds=20, tokens=60, drafted=40, accepted=20)
    spec.target_seconds, spec.target_forwards = 20 * target_step, 20
    spec.draft_seconds, spec.draft_forwards = 40 * draft_step, 40
    spec.decode_seconds = spec.target_seconds + spec.draft_seconds
    return summarize([RunPair(plain, spec, True)])


@pytest.mark.parametrize(
    ("target", "draft", "code", "severity"),
    [
        # One model, its lm_head at 8 bits (3.3.0's export) and at 4 (3.4.1's): the same
        # parameter count, which called the draft "not smaller".
        ("era-3.3.0", "era-3.4.1", "draft_too_close_in_size", WARNING),
        ("era-3.4.1", "era-3.3.0", "draft_not_smaller", WARNING),
        ("fast-target", "fast-draft", "draft_cost", INFO),  # 12 layers against 2
        ("qwen3-target", "qwen3-draft-noisy", "draft_not_smaller", WARNING),
    ],
)
def test_the_estimate_weighs_the_bytes_each_model_reads(
    fixture_bundle: Fixture, target: str, draft: str, code: str, severity: str
) -> None:
    t, d = fixture_bundle(target), fixture_bundle(draft)
    found = _cost(assess(read_bundle(t), read_bundle(d)))
    c = _weight_bytes(d) / _weight_bytes(t)
    assert (found.code, found.severity) == (code, severity)
    assert (found.target, found.draft) == (_weight_bytes(t), _weight_bytes(d))
    assert f"costs about {c:.2f} " in found.message and ESTIMATED in found.message
    assert "read per token" in found.shown(found.target)


def test_an_8_bit_target_and_its_4_bit_draft_are_not_called_equal(fixture_bundle: Fixture) -> None:
    """The issue's pair in small: equal parameter counts, 3/4 of the bytes."""
    eight, four = read_bundle(fixture_bundle("era-3.3.0")), read_bundle(fixture_bundle("era-3.4.1"))
    assert eight.params_estimate == four.params_estimate
    assert (eight.embedding_bits, four.embedding_bits) == (8, 4)
    found = _cost(assess(eight, four))
    assert "cannot speed anything up" not in found.message
    assert found.message.startswith("A draft step costs about 0.76 of a target step")


def test_the_measured_c_takes_the_estimate_s_place(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-identical")
    estimated = assess_paths(target, draft)
    assert _cost(estimated).code == "draft_not_smaller" and estimated.level == WARNINGS
    assert with_measured_cost(estimated, target, draft) == estimated  # never ran here
    figures = _figures(target_step=0.004, draft_step=0.0012)
    kept = record_cost(target, draft, figures, BY_TUNE)
    assert kept is not None and kept.ratio == pytest.approx(0.3) == figures.cost_ratio
    measured = with_measured_cost(estimated, target, draft)
    found = _cost(measured)
    assert (found.code, found.severity, measured.level) == ("draft_cost", INFO, COMPATIBLE)
    assert "costs about 0.30 of a target step" in found.message
    assert "measured on this computer by a Tune sweep on " in found.message
    assert ESTIMATED not in found.message
    assert (found.shown(found.target), found.shown(found.draft)) == (
        "4.0 ms a step",
        "1.2 ms a step",
    )
    # The rest of the verdict is as it was, in its order.
    codes = [r.code for r in estimated.reasons]
    assert [r.code for r in measured.reasons] == [
        "draft_cost" if c in COST_CODES else c for c in codes
    ]
    # The latest measurement wins; a bench says so.
    record_cost(target, draft, _figures(0.004, 0.0032), BY_BENCH)
    found = _cost(with_measured_cost(estimated, target, draft))
    assert found.code == "draft_too_close_in_size" and f"by {BY_BENCH} on " in found.message


def test_a_recipe_edit_keeps_the_measured_c_and_new_weights_drop_it(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-noisy")
    record_cost(target, draft, _figures(0.004, 0.001), BY_TUNE)
    recipe = draft / "config_cpu.json"
    recipe.write_text(json.dumps({**json.loads(recipe.read_text()), "thread_num": 1}))
    assert read_cost(target, draft) is not None
    with (draft / "llm.mnn.weight").open("ab") as weights:
        weights.write(b"\0")
    assert read_cost(target, draft) is None  # other models: estimated until they run
    assert read_cost(draft, target) is None  # a pair has its sides


def test_nothing_is_kept_without_a_draft_step_and_a_hand_edit_is_ignored(
    bundle_copy: Copy,
) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-noisy")
    assert record_cost(target, draft, _figures(0.004, 0.0), BY_BENCH) is None
    assert not store_path().exists()
    record_cost(target, draft, _figures(0.004, 0.001), BY_BENCH)
    data = json.loads(store_path().read_text())
    (entry,) = data["pairs"].values()
    entry["ratio"] = -1
    store_path().write_text(json.dumps(data))
    assert read_cost(target, draft) is None


def test_check_says_the_measured_c(bundle_copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-noisy")
    assert main(["check", str(target), str(draft)]) == 0
    said = capsys.readouterr().out
    assert "costs about 1.00 target steps (c, estimated from the weights' size" in said
    assert "[target: 258.3 KB read per token; draft: 258.3 KB read per token]" in said
    record_cost(target, draft, _figures(0.004, 0.002), BY_BENCH)
    assert main(["check", str(target), str(draft), "--json"]) == 0
    (found,) = [
        r for r in json.loads(capsys.readouterr().out)["reasons"] if r["code"] in COST_CODES
    ]
    assert found["code"] == "draft_cost" and found["severity"] == INFO
    assert f"0.50 of a target step (c, measured on this computer by {BY_BENCH}" in found["message"]
    assert (found["target"], found["draft"]) == (4.0, 2.0)
