"""The sampler on the command line: `generate` with the recipe's sampler, its flags and
seeds; `bench --sample`; `tune --sample --temperatures`. Real worker, fixture bundles."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import pair_args, run_cli

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
NORMAL = {"memory": "normal"}  # exact numerics: greedy outputs match token for token


def _recipe(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _generate(fixture_bundle: Fixture, recipe: Path, *flags: str) -> dict[str, Any]:
    pair = pair_args(fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-noisy"), recipe)
    proc = run_cli(
        "generate",
        *pair,
        "--prompt",
        "Once upon a time",
        "--max-tokens",
        "24",
        "--json",
        *flags,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_generate_samples_with_the_recipe_and_a_seed_repeats_it(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    recipe = _recipe(tmp_path, "normal.json", NORMAL)
    first = _generate(fixture_bundle, recipe, "--seed", "123")
    again = _generate(fixture_bundle, recipe, "--seed", "123")
    other = _generate(fixture_bundle, recipe, "--seed", "124")
    assert first["text"] == again["text"] and first["tokens"] == again["tokens"]
    assert other["tokens"] != first["tokens"]
    # The target's recipe (config.json) decides the sampler; the JSON says it and the seed.
    assert first["sampler"] == "temperature 0.8, topK 40, tfs 1, typical 0.95, topP 0.9, minP 0.05"
    assert first["seed"] == 123 == first["stats"]["seed"]
    assert first["stats"]["sampler"] == first["sampler"]
    # The flags override the recipe.
    hotter = _generate(fixture_bundle, recipe, "--seed", "123", "--temperature", "1.5")
    assert hotter["sampler"].startswith("temperature 1.5, topK 40")


def test_greedy_flag_temperature_zero_and_a_greedy_recipe_agree(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    normal = _recipe(tmp_path, "normal.json", NORMAL)
    greedy_recipe = _recipe(tmp_path, "greedy.json", {**NORMAL, "sampler_type": "greedy"})
    flag = _generate(fixture_bundle, normal, "--greedy")
    recipe = _generate(fixture_bundle, greedy_recipe)
    cold = _generate(fixture_bundle, normal, "--temperature", "0")
    assert flag["tokens"] == recipe["tokens"] == cold["tokens"]
    assert (flag["sampler"], flag["seed"]) == ("greedy", None)
    assert (recipe["sampler"], recipe["seed"]) == ("greedy", None)
    assert cold["sampler"].startswith("greedy") and cold["seed"] is None


def test_generate_tells_the_sampler_and_seed_once_on_stderr(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    proc = run_cli(
        "generate",
        "--target",
        str(fixture_bundle("qwen3-target")),
        "--recipe",
        str(_recipe(tmp_path, "normal.json", NORMAL)),
        "--prompt",
        "Hello",
        "--max-tokens",
        "8",
        "--top-k",
        "20",
        "--top-p",
        "0.95",
        "--temperature",
        "0.6",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    told = [line for line in proc.stderr.splitlines() if line.startswith("sampler:")]
    assert len(told) == 1
    seed = told[0].rsplit("--seed ", 1)[1].rstrip(")")
    assert told[0] == (
        "sampler: temperature 0.6, topK 20, tfs 1, typical 0.95, topP 0.95, minP 0.05 "
        f"· seed {seed} (repeat with --seed {seed})"
    )
    assert int(seed) >= 0 and "sampler" not in proc.stdout


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (("--temperature", "-0.5"), "argument --temperature: -0.5 is out of range (at least 0)"),
        (("--temperature", "warm"), "argument --temperature: 'warm' is not a number"),
        (("--temperature", "nan"), "argument --temperature: nan is out of range (at least 0)"),
        (("--top-k", "-1"), "argument --top-k: -1 is out of range (at least 0)"),
        (("--top-k", "2.5"), "argument --top-k: '2.5' is not a whole number"),
        (("--top-p", "0"), "argument --top-p: 0 is out of range (above 0, up to 1)"),
        (("--top-p", "1.5"), "argument --top-p: 1.5 is out of range (above 0, up to 1)"),
        (("--seed", "-3"), "argument --seed: -3 is out of range (0 to 9223372036854775807)"),
        (("--greedy", "--top-k", "5"), "--greedy cannot be combined with --top-k"),
    ],
)
def test_bad_sampler_flags_are_one_line_usage_errors(
    fixture_bundle: Fixture, draftdeck_home: Path, flags: tuple[str, ...], problem: str
) -> None:
    proc = run_cli(
        "generate",
        "--target",
        str(fixture_bundle("qwen3-target")),
        "--prompt",
        "hi",
        *flags,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert errors == [f"draftdeck generate: error: {problem}"]
    assert "Traceback" not in proc.stderr


def test_an_unknown_sampler_names_the_recipe_file_that_holds_it(
    bundle_copy: Copy, tmp_path: Path, draftdeck_home: Path
) -> None:
    target = bundle_copy("qwen3-target")
    recipe = _recipe(tmp_path, "odd.json", {"sampler_type": "nonsense"})
    args = ("generate", "--target", str(target), "--prompt", "hi", "--max-tokens", "4")
    proc = run_cli(*args, "--recipe", str(recipe), timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"draftdeck: {recipe}: the recipe's sampler cannot be used: unknown sampler "
        "'nonsense' (MNN knows greedy, temperature, topK, topP, minP, min_p, tfs, typical, "
        "penalty, mixed)"
    )
    # In the target's own config.json: that file is named.
    config = target / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "sampler_type": "nonsense"}))
    proc = run_cli(*args, timeout=120)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith(f"draftdeck: {config}: the recipe's sampler cannot be used")
    # --greedy needs no sampler from the recipe.
    assert run_cli(*args, "--greedy", timeout=120).returncode == 0


def _bench(fixture_bundle: Fixture, recipe: Path, *flags: str) -> Any:
    pair = pair_args(
        fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-identical"), recipe
    )
    return run_cli(
        "bench",
        *pair,
        "--tokens",
        "30",
        "--runs",
        "2",
        "--min-run-seconds",
        "0",  # what is drawn is tested here, not how long a run lasts
        *flags,
        timeout=300,
    )


def test_bench_sample_reports_the_sampler_and_expected_acceptance(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    recipe = _recipe(tmp_path, "normal.json", NORMAL)
    proc = _bench(fixture_bundle, recipe, "--sample", "--seed", "9", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["sampler"].startswith("temperature 0.8, topK 40") and result["seed"] == 9
    # Identical draft: p = q, so every draw is accepted and sum min(p, q) is 1.
    assert result["acceptance"] == 1.0
    assert result["expected_acceptance"] == pytest.approx(1.0, abs=1e-4)  # float32 rows
    assert result["expected_by_position"] == pytest.approx([1.0, 1.0, 1.0], abs=1e-4)
    assert result["per_position_acceptance"] == [1.0, 1.0, 1.0]
    assert result["lossless"] is None  # not a token-for-token comparison under sampling
    text = _bench(fixture_bundle, recipe, "--sample", "--seed", "9")
    assert text.returncode == 0, text.stderr
    assert "Expected (same basis)     1.000" in text.stdout
    assert "Per-position expected     1.00, 1.00, 1.00" in text.stdout
    assert "Sampler                   temperature 0.8, topK 40" in text.stdout
    assert "(seed 9, run pair i draws with seed + i)" in text.stdout
    # A seed without --sample means nothing: refused.
    refused = _bench(fixture_bundle, recipe, "--seed", "9")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "draftdeck bench: error: --seed needs --sample (greedy decoding draws nothing)"
    )


def test_tune_sample_sweeps_temperatures_and_applies_none(
    bundle_copy: Copy, draftdeck_home: Path
) -> None:
    target = bundle_copy("fast-target", desktop=True)
    draft = bundle_copy("fast-draft", desktop=True)
    before = (target / "config.json").read_text()
    proc = run_cli(
        "tune",
        "--target",
        str(target),
        "--draft",
        str(draft),
        "--quick",
        "--sample",
        "--temperatures",
        "0.6,1.0,0.8",  # 0.8 is the recipe's own: measured once, as the recipe's
        "--seed",
        "5",
        "--tokens",
        "16",
        "--budget",
        "1",
        "--min-run-seconds",
        "0.02",
        "--json",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "also at temperature 0.6, 1: measured, not applied" in proc.stderr
    out = json.loads(proc.stdout)
    rows = out["results"]
    assert out["plan"]["sample"] is True and out["plan"]["temperatures"] == [0.6, 1.0]
    assert {(r["draft_length"], r["temperature"]) for r in rows} == {
        (d, t) for d in (1, 2, 3, 4) for t in (None, 0.6, 1.0)
    }
    for row in rows:
        shown = 0.8 if row["temperature"] is None else row["temperature"]
        assert row["sampler"].startswith(f"temperature {shown:g}, topK 40")
        assert 0.0 <= row["expected_acceptance"] <= 1.0
    # Only the recipe's own sampler competes for best; the others are said to be unapplied.
    assert out["best"]["temperature"] is None
    assert "Temperatures 0.6, 1 were measured, not applied" in out["verdict"]
    assert (target / "config.json").read_text() == before


def test_tune_temperatures_need_sample(bundle_copy: Copy, draftdeck_home: Path) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    proc = run_cli(
        "tune", "--target", str(target), "--draft", str(draft), "--temperatures", "0.5",
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "draftdeck tune: error: --temperatures needs --sample (greedy decoding draws nothing)"
    )
