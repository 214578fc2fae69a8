"""A pack's own advice as TokForge really ships it (runtime_config.json of the
acceleration pack v3): every recommended key read under the recipe's names, the notes
shown where the advice is, `_comment` ignored, keys DraftDeck does not know kept
readable, and a target the pack disables named with the pack's reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.pack.advice import read_advice
from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess
from app.core.pack.verdict import BLOCKED, COMPATIBLE, INFO, WARNING, WARNINGS, Verdict
from app.core.recipe.presets import pack_preset, presets_for
from app.core.recipe.wording import preset_text, reason_text
from tests.helpers.tokforge import TOKFORGE_NOTES, TOKFORGE_RUNTIME_CONFIG, as_known, tokforge_pack

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
RECOMMENDS = (
    "The pack recommends: Target backend OpenCL, Draft backend CPU, Draft length 3, "
    "Draft threads 2, Draft power mode high, Draft sampler greedy."
)


def _verdict(fixture_bundle: Fixture, bundle_copy: Copy, target_key: str) -> Verdict:
    # A target that reads 11 times the draft's bytes a token, as a Qwen3-8B would.
    target = as_known(read_bundle(fixture_bundle("fast-target")), target_key)
    return assess(target, read_bundle(tokforge_pack(bundle_copy)))


def _texts(verdict: Verdict, severity: str) -> list[str]:
    return [reason_text(r) for r in verdict.of(severity)]


def test_every_recommended_key_and_note_is_read_and_the_comment_is_not(
    bundle_copy: Copy,
) -> None:
    advice = read_advice(read_bundle(tokforge_pack(bundle_copy)).runtime_config)
    assert advice is not None
    assert advice.recommended == json.loads(TOKFORGE_RUNTIME_CONFIG)["recommended"]
    assert tuple(advice.notes.values()) == TOKFORGE_NOTES
    assert list(advice.notes) == [
        "thread_num",
        "power_high",
        "draft_backend_cpu",
        "predict_length_3",
    ]
    assert advice.other == {}  # `_comment` is a comment, not advice
    assert [advice.targets[k].enabled for k in advice.targets] == [True, True, False, False]


def test_a_supported_target_shows_the_settings_in_recipe_words_and_every_note(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    verdict = _verdict(fixture_bundle, bundle_copy, "qwen3_8b")
    assert verdict.level == COMPATIBLE and verdict.target_model == "Qwen3-8B"
    said = _texts(verdict, INFO)
    assert (
        "The pack's authors support it for this target, claiming +24-40% (3x avg, "
        "500-tok prose)." in said
    )
    assert RECOMMENDS in said
    for note in TOKFORGE_NOTES:
        assert f"The pack's authors note: {note}" in said
    assert not any("Optimal runtime configuration" in text for text in said)
    rec = verdict.recommendation
    assert rec is not None and tuple(rec.notes.values()) == TOKFORGE_NOTES
    assert rec.to_json()["notes"]["power_high"] == TOKFORGE_NOTES[1]


def test_qwen3_4b_is_disabled_with_the_packs_reason(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    verdict = _verdict(fixture_bundle, bundle_copy, "qwen3_4b")
    assert verdict.level == WARNINGS
    assert _texts(verdict, WARNING) == [
        "The pack's authors disable it for Qwen3-4B: Degenerates — KL trained from 8B teacher."
    ]
    rec = verdict.recommendation
    assert rec is not None and rec.target_key == "qwen3_4b" and rec.enabled is False
    assert RECOMMENDS in _texts(verdict, INFO)  # the settings still read as they are


def test_a_qwen35_target_gets_the_packs_family_wide_reason(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    """The pack keys Qwen3.5 by family (`qwen3_5`), not by model."""
    target = as_known(read_bundle(fixture_bundle("qwen35-draft")), "qwen3.5_0.8b")
    verdict = assess(target, read_bundle(tokforge_pack(bundle_copy)))
    assert verdict.level == BLOCKED
    assert (
        "The pack's authors disable it for Qwen3.5-0.8B: Not compatible — different "
        "architecture (LinearAttention)." in _texts(verdict, WARNING)
    )
    rec = verdict.recommendation
    assert rec is not None and rec.target_key == "qwen3_5"


def test_a_model_entry_wins_over_the_family_entry(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    pack = tokforge_pack(bundle_copy)
    config = json.loads(TOKFORGE_RUNTIME_CONFIG)
    config["compatible_targets"] = {
        "qwen3": {"enabled": False, "reason": "not this family"},
        "qwen3_8b": {"enabled": True, "uplift": "+30%"},
    }
    (pack / "runtime_config.json").write_text(json.dumps(config))
    target = read_bundle(fixture_bundle("qwen3-target"))
    eight = assess(as_known(target, "qwen3_8b"), read_bundle(pack)).recommendation
    four = assess(as_known(target, "qwen3_4b"), read_bundle(pack)).recommendation
    assert eight is not None and (eight.target_key, eight.enabled) == ("qwen3_8b", True)
    assert four is not None and (four.target_key, four.reason) == ("qwen3", "not this family")


def test_keys_draftdeck_does_not_know_stay_readable(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    pack = tokforge_pack(bundle_copy)
    config = json.loads(TOKFORGE_RUNTIME_CONFIG)
    config["recommended"]["draft_lookahead"] = 4
    config["version"] = "v3"
    config["_author"] = "a comment too"
    (pack / "runtime_config.json").write_text(json.dumps(config))
    verdict = assess(
        as_known(read_bundle(fixture_bundle("qwen3-target")), "qwen3_8b"), read_bundle(pack)
    )
    said = _texts(verdict, INFO)
    assert RECOMMENDS[:-1] + ", draft_lookahead 4." in said
    assert "The pack's runtime_config.json also says: version v3." in said
    assert not any("a comment too" in text for text in said)


def test_check_shows_the_advice_and_the_notes(
    fixture_bundle: Fixture, bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = str(tokforge_pack(bundle_copy))
    assert main(["check", str(fixture_bundle("fast-target")), pack]) == 0
    out = capsys.readouterr().out
    assert f"  info     {RECOMMENDS}\n" in out
    for note in TOKFORGE_NOTES:
        assert f"  info     The pack's authors note: {note}\n" in out
    assert main(["check", str(fixture_bundle("fast-target")), pack, "--json"]) == 0
    recommendation = json.loads(capsys.readouterr().out)["recommendation"]
    assert recommendation["settings"]["draft_thread_num"] == 2
    assert tuple(recommendation["notes"].values()) == TOKFORGE_NOTES


def test_the_pack_preset_sets_the_recipe_fields_the_pack_means(bundle_copy: Copy) -> None:
    draft = read_bundle(tokforge_pack(bundle_copy))
    preset = pack_preset(draft)
    assert preset is not None
    assert preset.target == {"backend_type": "opencl", "draft_predict_length": 3}
    assert preset.draft == {
        "backend_type": "cpu",
        "thread_num": 2,
        "power": "high",
        "sampler_type": "greedy",
    }
    assert preset.notes == TOKFORGE_NOTES and preset.unapplied == {}
    # Not capped to this computer's cores: the pack's 2 threads are for a phone.
    assert presets_for(draft, cores=1)[0] == preset
    text = preset_text(preset)
    assert (
        "Sets: Target backend OpenCL, Draft length 3, Draft backend CPU, Draft threads 2, "
        "Draft power mode high, Draft sampler greedy." in text
    )
    for note in TOKFORGE_NOTES:
        assert f"The pack's authors note: {note}" in text


def test_a_pack_value_the_recipe_cannot_take_is_listed_not_applied(bundle_copy: Copy) -> None:
    pack = tokforge_pack(bundle_copy)
    config = json.loads(TOKFORGE_RUNTIME_CONFIG)
    config["recommended"].update(draft_power="turbo", draft_lookahead=4)
    (pack / "runtime_config.json").write_text(json.dumps(config))
    preset = pack_preset(read_bundle(pack))
    assert preset is not None
    assert "power" not in preset.draft and preset.draft["thread_num"] == 2
    assert preset.unapplied == {
        "draft_power": ("turbo", "'turbo' is not one of 'low', 'normal', 'high'"),
        "draft_lookahead": (4, "no recipe field"),
    }
    assert (
        "Not applied: draft_power turbo ('turbo' is not one of 'low', 'normal', 'high'), "
        "draft_lookahead 4 (no recipe field)." in preset_text(preset)
    )
