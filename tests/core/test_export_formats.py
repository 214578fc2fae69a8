"""Packs as they are on the Hub: the committed era bundles, made by MNN's own exporter at
the release tags 3.1.4, 3.3.0, 3.4.1 and 3.6.1 (tests/fixtures/README.md), are read,
paired across eras and run through the real engine."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra import errors
from app.core.measure.ram_estimate import estimate_model
from app.core.pack.bundle import read_bundle
from app.core.pack.chat_format import JINJA, PROMPT_TEMPLATES, _render_jinja
from app.core.pack.compat import assess
from app.core.pack.known_models import identify
from app.core.pack.verdict import BLOCKED
from app.core.phone.adb import Adb
from app.core.phone.push import DONE, PushJob
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Generate, Load
from tests.fake_phone import FakePhone
from tests.helpers.cli import pair_args, run_cli

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]

# bundle -> (format name, what had to be inferred, tokenizer file)
ERAS = {
    "era-3.1.4": ("mnn-3.1", {"model_type", "chat_template", "embedding"}, "tokenizer.txt"),
    "era-3.3.0": ("mnn-3.3", {"model_type"}, "tokenizer.txt"),
    "era-3.4.1": ("mnn-3.4", {"layers"}, "tokenizer.txt"),
    "era-3.6.1": ("mnn-3.6", set(), "tokenizer.mtok"),
    "qwen3-target": ("llmexport-0.0.5", set(), "tokenizer.mtok"),
}
PHONE_ROOT = "/data/local/tmp/mnn_models"
NORMAL = {"memory": "normal"}  # exact verify: identical weights accept everything
THOUGHT_AND_REPLY = "<think>\nOkay, a short answer is enough.\n</think>\n\nHello! 你好 👋"


@pytest.mark.parametrize("name", sorted(ERAS))
def test_each_era_is_read_with_its_facts(name: str, fixture_bundle: Fixture) -> None:
    """Every era re-exports qwen3-target's weights: the same model facts, told from what
    each format writes, and the format itself named with what was inferred."""
    fmt, inferred, tokenizer = ERAS[name]
    info = read_bundle(fixture_bundle(name))
    assert (info.model_type, info.layers, info.hidden_size) == ("qwen3", 2, 128)
    assert info.vocab_size == 1280
    assert info.export_format.name == fmt
    assert set(info.export_format.inferred) == inferred
    assert info.tokenizer.file == tokenizer
    assert {s.id for s in info.tokenizer.stop_tokens} == {1200, 1202}
    assert info.tokenizer.token_id("<think>") == 1203
    assert info.shape.source == "graph" and info.params_estimate > 0
    # The same ChatML however it is spelled: one prompt for one conversation.
    reference = read_bundle(fixture_bundle("qwen3-target")).chat.prompt_sha256
    assert info.chat.prompt_sha256 == reference is not None


def test_info_json_says_the_format_and_what_was_inferred(fixture_bundle: Fixture) -> None:
    done = run_cli("info", "--json", str(fixture_bundle("era-3.1.4")), check=True)
    data = json.loads(done.stdout)
    assert data["model_type"] == "qwen3" and data["vocab_size"] == 1280
    fmt = data["export_format"]
    assert fmt["name"] == "mnn-3.1" and "model_type absent" in fmt["evidence"]
    assert "q/k norms" in fmt["inferred"]["model_type"]
    assert data["chat_template_source"] == PROMPT_TEMPLATES
    text = run_cli("info", str(fixture_bundle("era-3.4.1")), check=True).stdout
    assert "MNN exporter 3.4.x" in text and "Inferred layers" in text


def test_the_format_line_says_of_each_key_whether_it_is_there(fixture_bundle: Fixture) -> None:
    # "model_type, layer_nums absent" read as both absent: each key says which it is.
    rows = dict(read_bundle(fixture_bundle("era-3.4.1")).export_format.rows())
    line = rows["Export format"]
    assert line.startswith("MNN exporter 3.4.x (2026-03): model_type present, layer_nums absent, ")


def test_2025_target_at_real_vocabulary(fixture_bundle: Fixture) -> None:
    """The MNN team's 3.1.x format with the real Qwen3 tokenizer.txt: vocabulary from
    embeddings_bf16.bin, family from the tokenizer and graph, both Qwen3 stops."""
    info = read_bundle(fixture_bundle("era-3.1.4-realtok"))
    assert (info.vocab_size, info.layers, info.model_type) == (151_936, 1, "qwen3")
    assert info.export_format.name == "mnn-3.1"
    stops = {s.id: s.text for s in info.tokenizer.stop_tokens}
    assert stops == {151645: "<|im_end|>", 151643: "<|endoftext|>"}
    assert info.tokenizer.token_id("<think>") == 151667
    assert info.tokenizer.token_id("</think>") == 151668
    # 3.1 records no block (the weight file's size cannot tell 4 bits at block 64 from 5
    # per row), but the graph keeps each layer's bits.
    assert info.embedding_bits == 16 and info.quant_bits == 4
    assert info.quantization == "4-bit; embedding 16-bit"


def test_3_3_embedding_bits_are_not_the_models(fixture_bundle: Fixture) -> None:
    info = read_bundle(fixture_bundle("era-3.3.0"))
    assert (info.quant_bits, info.quant_block, info.embedding_bits) == (4, 128, 8)
    assert info.quantization == "4-bit, block 128; embedding 8-bit"


def test_prompt_templates_become_a_jinja_template_that_renders_the_same(
    fixture_bundle: Fixture,
) -> None:
    chat = read_bundle(fixture_bundle("era-3.1.4")).chat
    assert chat.source == PROMPT_TEMPLATES
    template = chat.engine_template()
    assert template is not None
    for messages in (
        ({"role": "user", "content": "Hi"},),
        ({"role": "system", "content": 'Say "x"\\n'}, {"role": "user", "content": "{{ y }}"}),
    ):
        assert _render_jinja(template, "", "", messages) == chat.render(messages)
    assert read_bundle(fixture_bundle("era-3.4.1")).chat.source == JINJA


CROSS = sorted(itertools.product(sorted(ERAS), ["era-3.1.4", "era-3.4.1", "era-3.6.1"]))


@pytest.mark.parametrize(("target", "draft"), CROSS)
def test_every_cross_era_pair_is_compatible(
    target: str, draft: str, fixture_bundle: Fixture
) -> None:
    t_info, d_info = (read_bundle(fixture_bundle(n)) for n in (target, draft))
    verdict = assess(t_info, d_info)
    assert not verdict.blocked, verdict.summary()
    codes = {r.code for r in verdict.reasons}
    assert "chat_template_differs" not in codes
    if t_info.tokenizer.type != d_info.tokenizer.type:
        assert "tokenizer_same_vocabulary" in codes


def test_taobao_target_with_a_tokforge_draft(fixture_bundle: Fixture) -> None:
    """The normal case: a 2025 tokenizer.txt target and a 2026 draft of the same
    vocabulary; `check` says the formats differ and what that means, and exits 0."""
    done = run_cli(
        "check", str(fixture_bundle("era-3.1.4-realtok")), str(fixture_bundle("qwen3-realtok"))
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stored in different formats (tokenizer.txt, tokenizer.mtok)" in done.stdout


def test_other_vocabulary_of_the_same_size_blocks(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    """Same file format and size, one token with other text: blocked."""
    pack = bundle_copy("era-3.1.4")
    path = pack / "tokenizer.txt"
    lines = path.read_bytes().split(b"\n")
    lines[4 + 100] = b"eHl6"  # id 100 is now "xyz"
    path.write_bytes(b"\n".join(lines))
    verdict = assess(read_bundle(fixture_bundle("era-3.3.0")), read_bundle(pack))
    assert "vocabulary_differs" in {r.code for r in verdict.of(BLOCKED)}


def test_2025_target_chats_with_turn_markers(client: EngineClient, fixture_bundle: Fixture) -> None:
    """MNN 3.6.1 reads no prompt templates; without the engine's jinja the 3.1.x pack's
    prompt is the bare text and the chain never starts."""
    client.run(Load(target=str(fixture_bundle("era-3.1.4-realtok")), target_config=NORMAL))
    done = client.run(Generate(prompt="Hi", max_tokens=40))
    assert done.text == THOUGHT_AND_REPLY
    assert done.stats.tokens == 19  # stopped on <|endoftext|>, not at max_tokens


def test_cross_era_speculation_is_exact(
    client: EngineClient, fixture_bundle: Fixture, tmp_path: Path
) -> None:
    """A 2025 target and a 2026 draft of the same weights: the identical draft is
    accepted everywhere and the text is the plain decoding's."""
    target, draft = fixture_bundle("era-3.1.4-realtok"), fixture_bundle("qwen3-realtok")
    client.run(
        Load(
            target=str(target),
            draft=str(draft),
            target_config=NORMAL,
            draft_config=NORMAL,
            draft_length=3,
        )
    )
    done = client.run(Generate(prompt="Hi", max_tokens=40))
    assert done.text == THOUGHT_AND_REPLY
    assert done.stats.acceptance == 1.0 and done.stats.drafted > 0
    assert done.stats.from_draft + done.stats.corrections == done.stats.tokens == 19


@pytest.mark.parametrize("target", ["era-3.1.4", "era-3.3.0", "era-3.6.1"])
def test_generate_and_bench_run_across_eras(
    target: str, fixture_bundle: Fixture, tmp_path: Path
) -> None:
    recipe = tmp_path / "normal.json"
    recipe.write_text(json.dumps(NORMAL))
    args = pair_args(fixture_bundle(target), fixture_bundle("era-3.4.1"), recipe)
    done = run_cli(
        "generate", *args, "--prompt", "Tell me a story", "--max-tokens", "24", "--greedy", "--json"
    )
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]
    assert stats["tokens"] == 24 and stats["acceptance"] > 0.9
    bench = run_cli(
        "bench", *args, "--tokens", "16", "--runs", "1", "--min-run-seconds", "0", "--json"
    )
    assert bench.returncode == 0, bench.stderr


@pytest.mark.parametrize(
    ("name", "edit", "error", "file", "words"),
    [
        ("era-3.1.4", "cut_embeddings", errors.BadValueError, "embeddings_bf16.bin", "cut off"),
        (
            "era-3.6.1",
            "tie_object_key",
            errors.TieEmbeddingsError,
            "llm_config.json",
            "no quant_block",
        ),
        ("era-3.4.1", "tokenizer_header", errors.TokenizerError, "tokenizer.txt", "magic"),
        (
            "era-3.4.1",
            "graph_without_layers",
            errors.BadValueError,
            "llm_config.json",
            "layer_nums is missing",
        ),
    ],
)
def test_each_era_broken_its_own_way_names_the_file(
    name: str, edit: str, error: type[errors.FileError], file: str, words: str, bundle_copy: Copy
) -> None:
    pack = bundle_copy(name)
    if edit == "cut_embeddings":
        path = pack / "embeddings_bf16.bin"
        path.write_bytes(path.read_bytes()[:-100])
    elif edit == "tie_object_key":
        config = json.loads((pack / "llm_config.json").read_text())
        del config["tie_embeddings"]["quant_block"]
        (pack / "llm_config.json").write_text(json.dumps(config))
    elif edit == "tokenizer_header":
        path = pack / "tokenizer.txt"
        path.write_bytes(b"431 1\n" + path.read_bytes().split(b"\n", 1)[1])
    else:
        path = pack / "llm.mnn"
        path.write_bytes(path.read_bytes().replace(b"/layers.", b"/blocks."))
    with pytest.raises(error) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / file
    assert words in caught.value.problem


def test_a_tokforge_era_draft_goes_to_the_phone_whole(
    tmp_path: Path, phone: FakePhone, bundle_copy: Copy
) -> None:
    """Its two draft recipes, runtime_config.json and tokenizer.txt reach the phone
    byte for byte and verified (the fake phone behind a real adb server)."""
    pack = bundle_copy("era-3.4.1-tokforge", tmp_path / "library" / "tokforge")
    job = PushJob(Adb(), phone.address, pack, PHONE_ROOT)
    job.run()
    status = job.status()
    assert status.state == DONE, status.error
    on_phone = phone.local(f"{PHONE_ROOT}/tokforge")
    names = sorted(p.name for p in pack.iterdir())
    assert {"config_cpu.json", "draft_config_cpu.json", "tokenizer.txt"} <= set(names)
    assert sorted(status.verified) == names
    for name in names:
        assert (on_phone / name).read_bytes() == (pack / name).read_bytes(), name


def test_tune_runs_on_a_2025_target(fixture_bundle: Fixture, bundle_copy: Copy) -> None:
    """A quick sweep over a 3.1.x target and a 3.4.x draft finishes with rows (the
    figures themselves are the tune tests' business)."""
    target = bundle_copy("era-3.1.4")
    done = run_cli(
        *("tune", "--target", str(target), "--draft", str(fixture_bundle("era-3.4.1"))),
        *("--quick", "--tokens", "16", "--budget", "2", "--min-run-seconds", "0.05", "--json"),
        timeout=1200,  # a hang guard: with both cores busy this sweep took over 300 s
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["results"]
    assert rows and {row["draft_length"] for row in rows} >= {1, 2}


def test_a_3_1_target_is_recognised_by_its_shape(fixture_bundle: Fixture) -> None:
    """target_model recognition needs the family: inferred for a 3.1.x pack, it finds
    the model a pack's advice is keyed by (here the shape made Qwen3-8B's)."""
    info = read_bundle(fixture_bundle("era-3.1.4"))
    assert "model_type" in info.export_format.inferred
    eight_b = dataclasses.replace(info, hidden_size=4096, layers=36)
    model = identify(eight_b)
    assert model is not None and model.matches_key("qwen3_8b")


@pytest.mark.parametrize("name", ["era-3.1.4", "era-3.4.1", "era-3.6.1"])
def test_the_memory_estimate_reads_every_era(name: str, fixture_bundle: Fixture) -> None:
    """The same model in another format needs the same KV cache and as many layers;
    the stored weights are what that era's weight file holds."""
    reference = estimate_model(read_bundle(fixture_bundle("qwen3-target")), {})
    info = read_bundle(fixture_bundle(name))
    memory = estimate_model(info, {})
    assert (memory.layers, memory.kv_cache) == (reference.layers, reference.kv_cache)
    assert memory.stored_weights == (info.path / "llm.mnn.weight").stat().st_size
