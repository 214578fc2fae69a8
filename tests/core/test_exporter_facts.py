"""Facts that depend on the exporter, not the model (issue #36): an inferred family is
shown as one and never blocks a pair on its own, bare `%s` prompt templates are flagged
with the format the tokenizer implies, and the parameter count is the same whichever
exporter made the pack."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.pack.bundle import read_bundle
from app.core.pack.chat_format import JINJA
from app.core.pack.compat import assess
from app.core.pack.model_family import UNKNOWN
from app.core.pack.verdict import BLOCKED, INFO
from tests.helpers.cli import run_cli
from tests.helpers.smollm_3_1 import IM_END, make_smollm_3_1, name_family

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
SAME_MODEL = ("era-3.1.4", "era-3.3.0", "era-3.4.1", "era-3.6.1")


@pytest.fixture
def smollm(bundle_copy: Copy) -> Path:
    return make_smollm_3_1(bundle_copy("era-3.1.4"))


def test_chatml_specials_of_another_family_are_not_called_qwen(smollm: Path) -> None:
    """SmolLM2's `<|im_start|>`/`<|endoftext|>` sit at ids 0-2, before its vocabulary:
    no Qwen family, and no "qwen end of text" stop on id 0."""
    info = read_bundle(smollm)
    assert info.model_type == UNKNOWN
    assert "<|endoftext|> at id 0" in info.family_words
    assert {s.id for s in info.tokenizer.stop_tokens} == {IM_END}
    assert not any("end of text" in src for s in info.tokenizer.stop_tokens for src in s.sources)


def test_a_3_1_pack_and_its_make_pack_twin_pair(smollm: Path, bundle_copy: Copy) -> None:
    """The user's report: the same model, one pack from 3.1.4 and one naming `llama`."""
    twin = name_family(bundle_copy("era-3.1.4", smollm.parent / "twin"), "llama")
    make_smollm_3_1(twin)
    verdict = assess(read_bundle(smollm), read_bundle(twin))
    assert not verdict.blocked, verdict.summary()
    done = run_cli("check", str(smollm), str(twin))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "different families" not in done.stdout


def test_an_inferred_family_that_differs_is_a_note(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    """era-3.1.4's qwen3 is inferred; against a pack naming another family with the
    same vocabulary it is a note naming the inference, not a block."""
    named = name_family(bundle_copy("era-3.1.4"), "llama")
    verdict = assess(read_bundle(fixture_bundle("era-3.1.4")), read_bundle(named))
    assert not verdict.blocked, verdict.summary()
    note = next(r for r in verdict.reasons if r.code == "family_inferred_differs")
    assert note.severity == INFO
    assert "target qwen3, inferred from the Qwen tokenizer" in note.message
    assert "draft llama)" in note.message


def test_families_both_packs_name_still_block(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    named = name_family(bundle_copy("era-3.4.1"), "llama")
    verdict = assess(read_bundle(fixture_bundle("era-3.4.1")), read_bundle(named))
    assert "family_mismatch" in {r.code for r in verdict.of(BLOCKED)}


def test_info_marks_the_family_as_inferred(fixture_bundle: Fixture) -> None:
    pack = str(fixture_bundle("era-3.1.4"))
    text = run_cli("info", pack, check=True).stdout
    row = next(line for line in text.splitlines() if line.startswith("Model type"))
    assert "qwen3, inferred from the Qwen tokenizer" in row
    data = read_bundle(fixture_bundle("era-3.1.4")).to_json()
    assert data["model_type"] == "qwen3" and data["model_type_inferred"] is True
    assert read_bundle(fixture_bundle("era-3.6.1")).to_json()["model_type_inferred"] is False


def test_bare_templates_are_flagged_and_the_printed_fix_works(smollm: Path) -> None:
    """`info` says replies will not stop and prints the command giving the pack ChatML;
    run as printed, the pack then chats in ChatML and stops on `<|im_end|>`."""
    text = run_cli("info", str(smollm), check=True).stdout
    assert "replies will not stop by themselves" in text and "imply ChatML" in text
    command = next(line for line in text.splitlines() if line.startswith("Apply it"))
    argv = shlex.split(command.split(None, 2)[2])
    assert argv[:3] == ["draftdeck", "recipe", "set"]
    done = run_cli(*argv[1:])
    assert done.returncode == 0, done.stderr
    info = read_bundle(smollm)
    assert info.turn_markers is None and info.chat.source == JINJA
    prompt = info.chat.render([{"role": "user", "content": "Hi"}])
    assert prompt == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert any("jinja.eos" in src for s in info.tokenizer.stop_tokens for src in s.sources)


def test_bare_templates_without_known_specials_name_the_key(
    smollm: Path, fixture_bundle: Fixture
) -> None:
    """No ChatML or Llama 3 specials: still flagged, with the key to set and no fix."""
    path = smollm / "tokenizer.txt"
    path.write_text(path.read_text().replace("<|im_start|>", "<|im_begin|>", 1))
    bare = read_bundle(smollm).to_json()["chat_missing_turn_markers"]
    assert bare["implied_format"] is None and bare["key"] == "jinja"
    assert "Set `jinja` in config.json" in bare["message"]
    ready = read_bundle(fixture_bundle("era-3.1.4")).to_json()
    assert ready["chat_missing_turn_markers"] is None  # its ChatML templates mark turns


def test_the_parameter_count_is_the_same_in_every_era(fixture_bundle: Fixture) -> None:
    """3.1.x writes embeddings_bf16.bin beside the lm_head it copies: counted once."""
    counts = {name: read_bundle(fixture_bundle(name)).params_estimate for name in SAME_MODEL}
    assert len(set(counts.values())) == 1, counts
    info = read_bundle(fixture_bundle("era-3.1.4"))
    assert "copy of the lm_head" in info.export_format.inferred["embedding"]


def test_the_size_warning_does_not_depend_on_the_exporter(fixture_bundle: Fixture) -> None:
    """The same model as target and draft, in either era order: the same cost verdict
    (their weight files differ by 6 %)."""
    old, new = (read_bundle(fixture_bundle(name)) for name in ("era-3.1.4", "era-3.6.1"))
    sizes = [
        {r.code for r in assess(t, d).reasons if r.code.startswith("draft_")}
        for t, d in ((old, new), (new, old))
    ]
    assert sizes == [{"draft_not_smaller"}, {"draft_not_smaller"}]
