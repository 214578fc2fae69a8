"""The smaller holes a hostile-input sweep found (#31): each a clear message naming the
file, or a figure that adds up."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra import errors
from app.core.infra.units import format_bytes
from app.core.measure.ram_estimate import estimate_pair
from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess
from app.core.pack.verdict import BLOCKED
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]


def test_a_tokenizer_txt_cut_after_its_special_ids_is_refused(bundle_copy: Copy) -> None:
    """The header and the special ids' lines parse; the rest of the vocabulary is gone."""
    pack = bundle_copy("era-3.1.4-realtok")
    path = pack / "tokenizer.txt"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:151_000]) + b"\n")  # past the last special id
    with pytest.raises(errors.TokenizerError) as caught:
        read_bundle(pack)
    assert caught.value.path == path
    assert "of the 151,669 vocabulary lines" in caught.value.problem
    assert "cut off" in caught.value.problem


def test_the_memory_figures_add_up(bundle_copy: Copy) -> None:
    """An absurd window (held to DraftDeck's bound; an absurd layer count is refused
    now): the part that makes the total huge is named with it."""
    pack = bundle_copy()
    config = json.loads((pack / "config.json").read_text())
    config["max_all_tokens"] = 10**12
    (pack / "config.json").write_text(json.dumps(config))
    pair = estimate_pair(read_bundle(pack), {})
    model = pair.target
    assert model.total == model.weights + model.kv_cache + model.prompt_work + model.fixed
    text = pair.summary(pair.engine)
    for part in (model.weights, model.kv_cache, model.prompt_work, model.fixed):
        assert format_bytes(part) in text
    assert f"overhead {format_bytes(model.fixed)}" in text
    assert f"MNN's runtime {format_bytes(pair.engine - model.total)}" in text


def test_an_unknown_vocabulary_is_not_called_different(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    config = json.loads((pack / "llm_config.json").read_text())
    del config["tie_embeddings"]
    (pack / "llm_config.json").write_text(json.dumps(config))
    draft = read_bundle(pack)
    assert draft.vocab_size is None
    verdict = assess(read_bundle(fixture_bundle("qwen3-target")), draft)
    codes = {r.code: r.severity for r in verdict.reasons}
    assert "vocab_mismatch" not in codes and codes["vocab_unknown"] == "warning"
    assert "different vocabularies" not in verdict.summary()
    assert not verdict.of(BLOCKED)


def test_symbolic_links_that_lead_nowhere_say_so(tmp_path: Path) -> None:
    loop_a, loop_b, dangling = tmp_path / "a", tmp_path / "b", tmp_path / "gone"
    os.symlink(loop_b, loop_a)
    os.symlink(loop_a, loop_b)
    os.symlink(tmp_path / "nowhere", dangling)
    with pytest.raises(errors.NotABundleError, match="loops back on itself"):
        read_bundle(loop_a)
    with pytest.raises(errors.NotABundleError, match="nowhere, which is missing"):
        read_bundle(dangling)
    done = run_cli("info", str(loop_a))
    assert done.returncode == 1 and "loops back on itself" in done.stderr


def test_generate_reads_a_prompt_too_long_for_the_command_line(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    """188 KB does not fit in an argument list; from a file it is read, and here refused
    for the model's window with both numbers (a short file generates)."""
    big = tmp_path / "big.txt"
    big.write_text("The river runs past the mill. " * 6300, encoding="utf-8")
    assert big.stat().st_size > 188_000
    target = str(fixture_bundle("qwen3-target"))
    done = run_cli("generate", "--target", target, "--prompt-file", str(big), "--raw")
    assert done.returncode == 1 and "holds 2,048 tokens" in done.stderr
    small = tmp_path / "small.txt"
    small.write_text("Hello", encoding="utf-8")
    done = run_cli(
        "generate", "--target", target, "--prompt-file", str(small), "--max-tokens", "4",
        "--greedy", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stats"]["tokens"] == 4
    both = run_cli("generate", "--target", target, "--prompt", "x", "--prompt-file", str(small))
    assert both.returncode == 2 and "not allowed with" in both.stderr
