"""Settings and file problems in the words a user reads: the recipe schema's names for
a pack's recommended keys, and a broken file named once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from app.core.pack.compat import assess_paths
from app.core.pack.verdict import naming_file
from app.core.recipe.schema import FIELDS
from app.core.recipe.wording import LABELS, recommended_text, setting_text

Copy = Callable[..., Path]


def test_every_recipe_key_has_a_label() -> None:
    assert set(LABELS) == set(FIELDS)


def test_setting_text_names_the_side_only_where_both_have_the_key() -> None:
    assert setting_text("draft_predict_length", 3, "target") == "Draft length 3"
    assert setting_text("backend_type", "opencl", "target") == "Target backend OpenCL"
    assert setting_text("thread_num", 2, "draft") == "Draft threads 2"
    assert setting_text("backend_type", "cpu") == "Backend CPU"
    assert setting_text("reuse_kv", True) == "Reuse the KV cache yes"
    assert setting_text("backend_type", ["cpu"], "draft") == "Draft backend cpu"
    assert setting_text("some_new_key", 7) == "some_new_key 7"


def test_recommended_text_of_a_real_pack(fixture_bundle: Callable[[str], Path]) -> None:
    config = fixture_bundle("qwen3-draft-noisy") / "runtime_config.json"
    recommended = json.loads(config.read_text())["recommended"]
    assert recommended_text(recommended) == (
        "Draft length 3, Draft threads 2, Draft backend CPU, Target backend OpenCL"
    )
    assert recommended_text({"temperature": 0.6, "lookahead": 4}) == (
        "Temperature 0.6, lookahead 4"
    )
    assert recommended_text({}) == "nothing"


def test_naming_file_says_the_file_once() -> None:
    assert naming_file("llm.mnn.weight is short", "llm.mnn.weight") == "llm.mnn.weight is short"
    assert naming_file("invalid JSON", "config.json") == "invalid JSON (config.json)"


def test_broken_bundle_reason_names_the_file_once(
    bundle_copy: Copy, fixture_bundle: Callable[[str], Path]
) -> None:
    broken = bundle_copy("qwen3-draft-noisy")
    weight = broken / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[: weight.stat().st_size // 2])
    (reason,) = assess_paths(fixture_bundle("qwen3-target"), broken).reasons
    assert reason.message.startswith("The draft bundle cannot be read: llm.mnn.weight is ")
    assert reason.message.count("llm.mnn.weight") == 1
    # A problem that does not name its file gets the name after it.
    bad_json = bundle_copy("qwen3-draft-noisy", broken.parent / "bad-json")
    (bad_json / "config_cpu.json").write_text("{oops")
    (reason,) = assess_paths(fixture_bundle("qwen3-target"), bad_json).reasons
    assert reason.message.startswith("The draft bundle cannot be read: invalid JSON")
    assert reason.message.endswith(" (config_cpu.json).")
    assert reason.message.count("config_cpu.json") == 1
