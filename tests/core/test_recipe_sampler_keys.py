"""The recipe schema knows every key the sampler reads (sampler_settings, as MNN 3.6.1
reads them), so that `recipe show`, the Recipes page and Chat agree on what a key is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.recipe.sampler_fields import (
    OLDER_SPELLINGS,
    SAMPLER_FIELDS,
    STEP_NAMES,
    keys_read,
    keys_used,
    spelling_in_use,
)
from app.core.recipe.sampler_settings import SAMPLER_TYPES, sampler_settings
from app.core.recipe.schema import ERROR, FIELDS, TARGET, validate

Copy = Callable[..., Path]


@pytest.mark.parametrize("kind", SAMPLER_TYPES)
def test_every_key_the_sampler_reads_is_a_schema_key(kind: str) -> None:
    # Every step in the mixed list, penalty included, so that mixed reads all it can.
    read = keys_read({"sampler_type": kind, "mixed_samplers": list(STEP_NAMES)})
    assert "sampler_type" in read and read - set(FIELDS) == set()
    if kind in ("tfs", "mixed"):
        assert {"tfs_z", "tfsZ"} <= read


def test_the_keys_a_sampler_uses() -> None:
    assert keys_used({"sampler_type": "greedy"}) == {"sampler_type"}
    mixed = keys_used({})
    assert {"temperature", "top_k", "topK", "mixed_samplers"} <= mixed
    assert "repetition_penalty" not in mixed  # read, but no penalty step in the list
    assert "repetition_penalty" in keys_used({"mixed_samplers": ["penalty", "topK"]})


def test_the_schema_defaults_are_what_the_sampler_reads_for_an_absent_key() -> None:
    # A recipe holding a key at its schema default samples as one without the key.
    kinds = ("topK", "topP", "min_p", "tfs", "typical", "penalty", "mixed")
    for field in SAMPLER_FIELDS[1:]:  # after sampler_type itself
        key = field.key
        for kind in kinds:
            bare = {"sampler_type": kind}
            assert sampler_settings(bare) == sampler_settings({**bare, key: field.default}), (
                key,
                kind,
            )


def test_sampler_lists_and_bias_are_checked() -> None:
    assert not validate({"mixed_samplers": ["penalty", "topK", "greedy"]}, TARGET)
    assert not validate({"banned_tokens": [1, 2], "logit_bias": {"5": -1.5}}, TARGET)
    bad = {
        "mixed_samplers": ["topK", "mixed"],
        "banned_tokens": [1, "2"],
        "logit_bias": {"5": "a lot"},
        "tfs_z": "high",
        "penalty_sampler": "topK",
    }
    problems = {p.key for p in validate(bad, TARGET) if p.severity == ERROR}
    assert problems == set(bad)
    # What the schema refuses, the sampler reader refuses too.
    for key, value in bad.items():
        if key != "penalty_sampler":  # MNN draws at temperature 0.8 for any other name
            with pytest.raises(ValueError):
                sampler_settings({"sampler_type": "mixed", key: value})


def test_which_spelling_counts() -> None:
    assert set(OLDER_SPELLINGS) == {"top_k", "top_p", "min_p", "tfs_z", "repetition_penalty"}
    assert spelling_in_use({}, "top_k") == "top_k"
    assert spelling_in_use({"topK": 20}, "top_k") == "topK"
    assert spelling_in_use({"topK": 20, "top_k": 5}, "top_k") == "top_k"
    assert spelling_in_use({"topK": 20, "top_k": -1}, "top_k") == "topK"  # -1: not set
    assert spelling_in_use({"penalty": 1.1}, "repetition_penalty") == "penalty"
    assert spelling_in_use({"temperature": 0.6}, "temperature") == "temperature"


def test_recipe_show_knows_the_sampler_keys(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = bundle_copy("qwen3-target")
    config = pack / "config.json"
    data = json.loads(config.read_text())
    data.update({"tfs_z": 1.0, "topK": 20, "penalty": 1.1, "mixed_samplers": ["topK"]})
    config.write_text(json.dumps(data, indent=4))
    assert main(["recipe", "show", str(pack)]) == 0
    out = capsys.readouterr().out
    for key in ("tfs_z", "topK", "penalty", "mixed_samplers"):
        (line,) = [line for line in out.splitlines() if line.strip().startswith(f"{key} =")]
        assert "not a DraftDeck key" not in line
    assert "topK = 20  (MNN default 40)" in out
    assert main(["recipe", "show", "--json", str(pack)]) == 0
    shown = json.loads(capsys.readouterr().out)
    for key in ("tfs_z", "topK", "penalty", "mixed_samplers"):
        assert key not in shown["target_config"]["unknown_keys"]
