"""Compatibility rules: every fixture pair, each rule on altered bundles, fuzzed recipes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.main import main
from app.core.infra.units import format_bytes
from app.core.pack.advice import NO_TARGET_ADVICE, TargetAdvice, read_advice, recommendation
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.compat import assess, assess_paths
from app.core.pack.known_models import identify, known_models
from app.core.pack.verdict import (
    BLOCKED,
    CANNOT_PAY,
    COMPATIBLE,
    INFO,
    WARNING,
    WARNINGS,
    Reason,
    describe,
    verdict_of,
)
from tests.helpers.cli import run_cli
from tests.helpers.strategies import json_values

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]


def _codes(target: BundleInfo, draft: BundleInfo, severity: str | None = None) -> set[str]:
    return {r.code for r in assess(target, draft).reasons if severity in (None, r.severity)}


def _info(fixture_bundle: Fixture, name: str) -> BundleInfo:
    return read_bundle(fixture_bundle(name))


@pytest.mark.parametrize(
    ("target", "draft", "level", "codes"),
    [
        ("qwen3-target", "qwen3-draft-identical", WARNINGS, {"draft_not_smaller"}),
        ("qwen3-target", "qwen3-draft-noisy", WARNINGS, {"draft_not_smaller"}),
        ("qwen3-target", "qwen3-draft-independent", WARNINGS, {"draft_not_smaller"}),
        ("fast-target", "fast-draft", COMPATIBLE, set()),
        ("fast-target", "qwen3-draft-noisy", COMPATIBLE, set()),
        (
            "qwen3-target",
            "qwen35-draft",
            BLOCKED,
            {
                "vocab_mismatch",
                "family_mismatch",
                "attention_mismatch",
            },
        ),
        (
            "qwen35-draft",
            "qwen3-draft-noisy",
            BLOCKED,
            {
                "vocab_mismatch",
                "family_mismatch",
                "attention_mismatch",
            },
        ),
        (
            "qwen35-draft",
            "qwen35-draft",
            CANNOT_PAY,
            {"draft_not_smaller", "linear_attention_pair"},
        ),
    ],
)
def test_fixture_pairs(
    fixture_bundle: Fixture, target: str, draft: str, level: str, codes: set[str]
) -> None:
    verdict = assess(_info(fixture_bundle, target), _info(fixture_bundle, draft))
    assert verdict.level == level
    severe = {r.code for r in verdict.reasons if r.severity != "info"}
    assert severe == codes


def test_blocked_reasons_carry_both_values(fixture_bundle: Fixture) -> None:
    verdict = assess(_info(fixture_bundle, "qwen3-target"), _info(fixture_bundle, "qwen35-draft"))
    vocab = next(r for r in verdict.reasons if r.code == "vocab_mismatch")
    assert (vocab.target, vocab.draft) == (1280, 1536)
    family = next(r for r in verdict.reasons if r.code == "family_mismatch")
    assert (family.target, family.draft) == ("qwen3", "qwen3_5")
    attention = next(r for r in verdict.reasons if r.code == "attention_mismatch")
    assert (attention.target, attention.draft) == ("full", "linear")
    assert "vocabularies" in verdict.summary()


def test_qwen35_pair_runs_but_cannot_pay(
    fixture_bundle: Fixture, bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two Qwen3.5 bundles (an identical pair): compatible, not blocked, and clearly
    told that speculation cannot pay on MNN 3.6.1 and why."""
    target = bundle_copy("qwen35-draft")
    draft = fixture_bundle("qwen35-draft")
    verdict = assess(read_bundle(target), read_bundle(draft))
    assert verdict.level == CANNOT_PAY and verdict.cannot_pay and not verdict.blocked
    assert verdict.label == (
        "Compatible, but speculation cannot pay on MNN 3.6.1 "
        "(the linear-attention state cannot be rolled back)"
    )
    reason = next(r for r in verdict.reasons if r.code == "linear_attention_pair")
    assert reason.severity == WARNING and (reason.target, reason.draft) == ("mix", "mix")
    assert "cannot beat plain decoding" in reason.message
    assert "MNN 3.6.1 cannot roll that state back" in reason.message
    # The reason speculation cannot pay leads, before lesser warnings.
    assert verdict.summary().startswith(reason.message)
    assert verdict.to_json()["verdict"] == "cannot_pay"
    # It can run: `check` exits 0 and names the level.
    assert main(["check", str(target), str(draft)]) == 0
    assert capsys.readouterr().out.startswith("Compatible, but speculation cannot pay")
    # A Qwen3.5 draft with a Qwen3 target stays blocked.
    assert assess(_info(fixture_bundle, "qwen3-target"), read_bundle(draft)).blocked


def _rewrite_header(pack: Path, special: list[int], stop: list[int]) -> None:
    path = pack / "tokenizer.mtok"
    data = path.read_bytes()
    lines = data.split(b"\n", 3)
    ids = special + stop
    header = f"{lines[0].decode()}\n{len(special)} {len(stop)} 0\n{' '.join(map(str, ids))}\n"
    path.write_bytes(header.encode() + lines[3])


def test_changed_special_ids_are_said(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    """Only the target encodes: other special ids over the same vocabulary change
    nothing in a pair, they are said, not warned about."""
    pack = bundle_copy("qwen3-draft-noisy")
    _rewrite_header(pack, [1200, 1202, 1203], [1202])
    verdict = assess(_info(fixture_bundle, "qwen3-target"), read_bundle(pack))
    said = {r.code: r.severity for r in verdict.reasons}
    assert not verdict.blocked and said["special_ids_differ"] == "info"
    assert said["tokenizer_same_vocabulary"] == "info"


def test_header_stop_ids_that_end_up_the_same_say_nothing(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    """The header names <|endoftext|> instead of <|im_end|>, but the template's eos and
    Qwen's rule give both packs the same stops: nothing differs where it matters."""
    pack = bundle_copy("qwen3-draft-noisy")
    _rewrite_header(pack, [1200, 1202, 1201], [1200])
    codes = _codes(_info(fixture_bundle, "qwen3-target"), read_bundle(pack))
    assert not codes & {"stop_ids_differ", "vocabulary_differs"}


def test_other_vocabulary_in_another_format_blocks(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    path = pack / "tokenizer.mtok"
    # The same ids in the older text format (huggingface: one byte-level token a line),
    # but the tokens are other text.
    header = path.read_bytes().split(b"\n", 3)[1:3]
    names = [f"t{i}" for i in range(1200)] + ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    names += [f"pad{i}" for i in range(1203, 1280)]
    vocab = f"{len(names)} 0\n" + "\n".join(names) + "\n"
    path.write_bytes(b"430 3\n" + b"\n".join(header) + b"\n" + vocab.encode())
    assert "vocabulary_differs" in _codes(
        _info(fixture_bundle, "qwen3-target"), read_bundle(pack), BLOCKED
    )


def test_same_vocabulary_other_bytes_is_said_not_warned(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    with (pack / "tokenizer.mtok").open("ab") as handle:
        handle.write(b"\x00")
    target = _info(fixture_bundle, "fast-target")
    verdict = assess(target, read_bundle(pack))
    assert _codes(target, read_bundle(pack), "warning") == set()
    assert "tokenizer_same_vocabulary" in {r.code for r in verdict.reasons}


def test_chat_template_differs_warns(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    config = json.loads((pack / "llm_config.json").read_text())
    config["jinja"]["chat_template"] += " changed text"
    (pack / "llm_config.json").write_text(json.dumps(config))
    target = _info(fixture_bundle, "fast-target")
    assert _codes(target, read_bundle(pack), "warning") == {"chat_template_differs"}


def test_draft_size_rules(fixture_bundle: Fixture) -> None:
    """By the bytes of weights each reads per token, not by parameters: the same model
    with its lm_head at 8 bits (era 3.3.0) and at 4 bits (3.4.1) has one parameter
    count, but the 4-bit one reads 76 % of the other's bytes a step."""
    target = _info(fixture_bundle, "fast-target")
    draft = _info(fixture_bundle, "fast-draft")
    eight, four = _info(fixture_bundle, "era-3.3.0"), _info(fixture_bundle, "era-3.4.1")
    assert eight.params_estimate == four.params_estimate
    assert _codes(eight, four, "warning") == {"draft_too_close_in_size"}
    assert _codes(four, eight, "warning") == {"draft_not_smaller"}
    assert _codes(target, draft, "warning") == set()
    assert _codes(target, draft, "info") >= {"draft_cost"}


def test_visual_draft_warns(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    pack = bundle_copy("fast-draft")
    config = json.loads((pack / "llm_config.json").read_text())
    config["is_visual"] = True
    (pack / "llm_config.json").write_text(json.dumps(config))
    target = _info(fixture_bundle, "fast-target")
    assert _codes(target, read_bundle(pack), "warning") == {"visual_draft"}


def _as_known(info: BundleInfo, key: str) -> BundleInfo:
    model = next(m for m in known_models() if m.key == key)
    return dataclasses.replace(
        info, hidden_size=model.hidden_size, layers=model.layers, params_estimate=10**10
    )


def test_known_targets_are_identified(fixture_bundle: Fixture) -> None:
    target = _info(fixture_bundle, "qwen3-target")
    assert identify(target) is None
    assert identify(_as_known(target, "qwen3_8b")).name == "Qwen3-8B"  # type: ignore[union-attr]
    qwen35 = _info(fixture_bundle, "qwen35-draft")
    assert identify(_as_known(qwen35, "qwen3.5_0.8b")).name == "Qwen3.5-0.8B"  # type: ignore[union-attr]


def test_runtime_config_disabled_target_warns_with_reason(fixture_bundle: Fixture) -> None:
    target = _as_known(_info(fixture_bundle, "qwen3-target"), "qwen3_4b")
    verdict = assess(target, _info(fixture_bundle, "qwen3-draft-noisy"))
    disabled = next(r for r in verdict.reasons if r.code == "pack_disabled_for_target")
    assert disabled.severity == "warning"
    assert "Degenerates" in disabled.message and "Qwen3-4B" in disabled.message
    assert verdict.level == WARNINGS
    assert verdict.recommendation is not None and verdict.recommendation.enabled is False


def test_runtime_config_recommendation_for_supported_target(fixture_bundle: Fixture) -> None:
    # Bigger than the draft in the bytes it reads a token, as a Qwen3-8B is.
    target = _as_known(_info(fixture_bundle, "fast-target"), "qwen3_8b")
    verdict = assess(target, _info(fixture_bundle, "qwen3-draft-noisy"))
    assert verdict.level == COMPATIBLE
    rec = verdict.recommendation
    assert rec is not None and rec.enabled is True and rec.uplift == "+30%"
    assert rec.settings["draft_predict_length"] == 3
    assert {"target_identified", "pack_recommends", "pack_recipe"} <= {
        r.code for r in verdict.reasons
    }


def test_runtime_config_entries_changed(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    config = json.loads((pack / "runtime_config.json").read_text())
    config["compatible_targets"]["qwen3_8b"] = {"enabled": False, "reason": "Too slow on CPU"}
    (pack / "runtime_config.json").write_text(json.dumps(config))
    target = _as_known(_info(fixture_bundle, "qwen3-target"), "qwen3_8b")
    verdict = assess(target, read_bundle(pack))
    assert "Too slow on CPU" in verdict.summary()


def test_broken_bundle_blocks(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    (pack / "llm.mnn").unlink()
    verdict = assess_paths(fixture_bundle("qwen3-target"), pack)
    assert verdict.blocked
    assert [r.code for r in verdict.reasons] == ["broken_bundle"]
    assert "model graph is missing" in verdict.reasons[0].message


def test_check_cli_exit_codes_and_json(
    fixture_bundle: Fixture, bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    target = str(fixture_bundle("qwen3-target"))
    assert main(["check", target, str(fixture_bundle("qwen3-draft-noisy"))]) == 0
    capsys.readouterr()
    assert main(["check", target, str(fixture_bundle("qwen35-draft")), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "blocked"
    assert {"code", "severity", "message", "target", "draft"} <= set(out["reasons"][0])
    assert "recommendation" in out
    broken = bundle_copy()
    (broken / "config.json").write_text("{")
    assert main(["check", str(broken), target, "--json"]) == 2
    (error,) = json.loads(capsys.readouterr().out)["errors"]
    assert (error["side"], error["code"], error["file"]) == (
        "target",
        "invalid_json",
        str(broken / "config.json"),
    )


def test_check_cli_as_a_process(fixture_bundle: Fixture) -> None:
    proc = run_cli(
        "check", str(fixture_bundle("fast-target")), str(fixture_bundle("fast-draft")), timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.startswith("Compatible")


target_keys = st.sampled_from(["qwen3_8b", "qwen3_4b", "Qwen3-14B", "qwen3.5_9b", "x", ""])
runtime_configs = st.fixed_dictionaries(
    {},
    optional={
        "recommended": json_values,
        "compatible_targets": st.dictionaries(target_keys, json_values, max_size=4) | json_values,
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=runtime_configs, known=st.sampled_from(["qwen3_8b", "qwen3_4b", None]))
def test_arbitrary_runtime_config_never_breaks_assess(
    content: dict[str, Any], known: str | None, fixture_bundle: Fixture
) -> None:
    draft = dataclasses.replace(
        _info(fixture_bundle, "qwen3-draft-noisy"), runtime_config=MappingProxyType(content)
    )
    target = _info(fixture_bundle, "qwen3-target")
    if known:
        target = _as_known(target, known)
    verdict = assess(target, draft)
    json.dumps(verdict.to_json())  # always serialisable for --json
    assert verdict.level in (COMPATIBLE, WARNINGS, BLOCKED)


def test_pack_advice_is_read_by_shape() -> None:
    assert read_advice({}) is None
    advice = read_advice(
        {
            "recommended": {"draft_predict_length": 3},
            "compatible_targets": {
                "qwen3_8b": {"enabled": True, "uplift": 30, "reason": None},
                "qwen3_4b": {"enabled": "no", "reason": "Degenerates"},
                "odd": [1, 2],
            },
        }
    )
    assert advice is not None and advice.recommended == {"draft_predict_length": 3}
    assert list(advice.targets) == ["qwen3_8b", "qwen3_4b", "odd"]
    assert advice.targets["qwen3_8b"] == TargetAdvice(True, "30", None)
    assert advice.targets["qwen3_4b"] == TargetAdvice(None, None, "Degenerates")
    assert advice.targets["odd"] == NO_TARGET_ADVICE
    broken = read_advice({"recommended": 5, "compatible_targets": "all"})
    assert broken is not None and broken.recommended == {} and broken.targets == {}


def test_recommendation_matches_the_known_target() -> None:
    advice = read_advice({"compatible_targets": {"Qwen3-8B": {"enabled": False}}})
    qwen3_8b = next(m for m in known_models() if m.key == "qwen3_8b")
    qwen3_4b = next(m for m in known_models() if m.key == "qwen3_4b")
    matched = recommendation(advice, qwen3_8b)
    assert matched is not None and matched.target_key == "Qwen3-8B" and matched.enabled is False
    other = recommendation(advice, qwen3_4b)
    assert other is not None and other.target_key is None and other.enabled is None
    assert recommendation(None, qwen3_8b) is None


def test_verdict_level_is_the_worst_reason() -> None:
    def reason(code: str, severity: str) -> Reason:
        return Reason(code, severity, code, None, None)

    assert verdict_of([], None, None).level == COMPATIBLE
    assert verdict_of([reason("x", INFO)], None, None).level == COMPATIBLE
    assert verdict_of([reason("x", WARNING)], None, None).level == WARNINGS
    cannot_pay = [reason("x", WARNING), reason("linear_attention_pair", WARNING)]
    assert verdict_of(cannot_pay, None, None).level == CANNOT_PAY
    assert verdict_of([*cannot_pay, reason("y", BLOCKED)], None, "M").level == BLOCKED


def test_family_message_names_only_what_differs(fixture_bundle: Fixture) -> None:
    """Qwen3.5 against Qwen3: the families and the attention kinds; the tokenizer and
    the chat template only when they differ."""
    target = _info(fixture_bundle, "qwen3-target")
    qwen35 = _info(fixture_bundle, "qwen35-draft")
    # The same tokenizer, vocabulary and chat template as the target, another family.
    same_files = dataclasses.replace(
        qwen35,
        tokenizer=target.tokenizer,
        vocab_size=target.vocab_size,
        chat=target.chat,
    )
    verdict = assess(target, same_files)
    assert {r.code for r in verdict.of(BLOCKED)} == {"family_mismatch", "attention_mismatch"}
    family = next(r for r in verdict.reasons if r.code == "family_mismatch")
    assert "target qwen3, draft qwen3_5" in family.message
    assert "tokenizer" not in family.message and "template" not in family.message
    assert "line up" not in verdict.summary()
    attention = next(r for r in verdict.reasons if r.code == "attention_mismatch")
    assert "The target uses full attention and the draft linear attention" in attention.message
    assert (attention.shown(attention.target), attention.shown(attention.draft)) == (
        "full attention",
        "linear attention",
    )
    # The real Qwen3.5 fixture ships its own tokenizer file: now that is named too.
    other_tokenizer = dataclasses.replace(same_files, tokenizer=qwen35.tokenizer)
    message = next(
        r for r in assess(target, other_tokenizer).reasons if r.code == "family_mismatch"
    )
    assert message.message.endswith("Their tokenizer files differ too.")
    other_chat = dataclasses.replace(target.chat, text=target.chat.text + "Answer briefly.")
    both = dataclasses.replace(other_tokenizer, chat=other_chat)
    message = next(r for r in assess(target, both).reasons if r.code == "family_mismatch")
    assert message.message.endswith("Their tokenizer files and chat templates differ too.")


def test_evidence_reads_as_words_with_units(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    verdict = assess(_info(fixture_bundle, "qwen3-target"), _info(fixture_bundle, "qwen35-draft"))
    vocab = next(r for r in verdict.reasons if r.code == "vocab_mismatch")
    assert (vocab.shown(vocab.target), vocab.shown(vocab.draft)) == ("1,280 tokens", "1,536 tokens")
    assert vocab.shown(None) == "unknown"
    noisy = assess(
        _info(fixture_bundle, "qwen3-target"), _info(fixture_bundle, "qwen3-draft-noisy")
    )
    size = next(r for r in noisy.reasons if r.code == "draft_not_smaller")
    assert size.shown(size.target) == "258.3 KB read per token"
    assert size.shown(3_500_000) == "3.3 MB read per token"
    # A broken pack: the unreadable file's full path, and that the other side read fine.
    broken = bundle_copy("qwen3-draft-noisy")
    (broken / "config_cpu.json").write_text("{oops")
    reason = assess_paths(fixture_bundle("qwen3-target"), broken).reasons[0]
    assert (reason.target, reason.draft) == ("read fine", str(broken / "config_cpu.json"))
    assert "invalid JSON" in reason.message and "config_cpu.json" in reason.message


def test_differing_files_are_told_apart_in_words(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    """Which file, how big, how long: not hash prefixes nobody can read."""
    pack = bundle_copy("qwen3-draft-noisy")
    with (pack / "tokenizer.mtok").open("ab") as handle:
        handle.write(b"\x00" * 2048)
    config = json.loads((pack / "llm_config.json").read_text())
    original = config["jinja"]["chat_template"]
    config["jinja"]["chat_template"] += " changed text"
    (pack / "llm_config.json").write_text(json.dumps(config))
    target = _info(fixture_bundle, "fast-target")
    reasons = {r.code: r for r in assess(target, read_bundle(pack)).reasons}
    tokenizer = reasons["tokenizer_same_vocabulary"]
    size = target.tokenizer.size_bytes
    assert tokenizer.shown(tokenizer.target) == f"tokenizer.mtok, {format_bytes(size)}"
    assert tokenizer.shown(tokenizer.draft) == f"tokenizer.mtok, {format_bytes(size + 2048)}"
    template = reasons["chat_template_differs"]
    assert template.shown(template.target) == f"{len(original):,} characters"
    assert template.shown(template.draft) == f"{len(original) + 13:,} characters"
    # The same name, size and length, other content: said, not shown twice alike.
    one, other = (bundle_copy("qwen3-draft-noisy", pack.parent / n) for n in ("one", "other"))
    for copy, last in ((one, b"\x00"), (other, b"\x01")):
        with (copy / "tokenizer.mtok").open("ab") as handle:
            handle.write(last)
    same = other
    config = json.loads((same / "llm_config.json").read_text())
    # (Text the prompt shows: a template cut to not compile is one that cannot render.)
    config["jinja"]["chat_template"] = original.replace("<|im_start|>", "<|im_staRt|>")
    (same / "llm_config.json").write_text(json.dumps(config))
    reasons = {r.code: r for r in assess(read_bundle(one), read_bundle(same)).reasons}
    for code in ("tokenizer_same_vocabulary", "chat_template_differs"):
        assert reasons[code].target != reasons[code].draft
        assert ", sha256 " in str(reasons[code].draft)
    # No template in llm_config.json: MNN takes the one tokenizer.mtok carries, and so
    # does the comparison (the same template as the other pack's).
    del config["jinja"]["chat_template"]
    (same / "llm_config.json").write_text(json.dumps(config))
    codes = {r.code for r in assess(read_bundle(one), read_bundle(same)).reasons}
    assert "chat_template_differs" not in codes


def test_long_id_lists_are_shortened_and_ids_have_no_separators() -> None:
    assert describe([151643, 151645]) == "151643, 151645"
    assert describe(list(range(8))) == "0, 1, 2, 3, 4, 5, 6, 7"
    assert describe(list(range(100, 114))) == "100, 101, 102, 103, 104, 105, … (14 in all)"


def test_check_cli_prints_the_evidence_in_words(
    fixture_bundle: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    target = str(fixture_bundle("qwen3-target"))
    assert main(["check", target, str(fixture_bundle("qwen3-realtok"))]) == 1
    out = capsys.readouterr().out
    assert "[target: 1,280 tokens; draft: 151,936 tokens]" in out
    assert "[1200" not in out  # no Python list reprs


def test_check_cli_says_the_packs_recommendation_in_recipe_words(
    fixture_bundle: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the Pair card says it: the Recipes page's names, not the pack's keys."""
    target, draft = str(fixture_bundle("fast-target")), str(fixture_bundle("qwen3-draft-noisy"))
    assert main(["check", target, draft]) == 0
    out = capsys.readouterr().out
    assert "The pack recommends: Draft length 3, Draft threads 2, Draft backend CPU" in out
    assert "draft_predict_length" not in out
