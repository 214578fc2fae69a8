"""Stop ids from everything a pack says, and added tokens in every text the engine makes.

MNN 3.6.1 decodes every added token (`<think>`, `</think>`, `<|im_end|>`) to empty text;
the engine reads their text from the tokenizer file instead (added_tokens.py). The toy
model never picks an added token by itself (the generator damps their rows), so one test
gives `<think>` and `</think>` the embedding rows of two tokens the model does pick, made
stronger: the real engine then emits them.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core.infra.errors import BadValueError
from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Decode, Done, Generate, Load, Rounds
from app.engine.worker.session import Session
from tests.helpers.cli import run_cli

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
NORMAL = {"memory": "normal", "thread_num": 1}
THINK, END_THINK, IM_END, END_OF_TEXT = 1203, 1204, 1202, 1200
PROMPT = "Once upon a time"


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2))


def _edit_llm_config(pack: Path, **changes: Any) -> None:
    path = pack / "llm_config.json"
    data = json.loads(path.read_text())
    data.update(changes)
    _write_json(path, data)


def _stops(pack: Path) -> list[dict[str, Any]]:
    return [s.to_json() for s in read_bundle(pack).tokenizer.stop_tokens]


# -- where stop ids come from ----------------------------------------------------------------


def test_generation_config_adds_stop_ids(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = bundle_copy()
    _write_json(pack / "generation_config.json", {"eos_token_id": [IM_END, END_OF_TEXT]})
    info = read_bundle(pack)
    assert info.tokenizer.stop_ids == (IM_END, END_OF_TEXT)
    assert info.tokenizer.file_stop_ids == (IM_END,)  # the header is unchanged
    assert main(["info", str(pack), "--json"]) == 0
    tokenizer = json.loads(capsys.readouterr().out)["tokenizer"]
    assert tokenizer["stop_ids"] == [IM_END, END_OF_TEXT]
    assert tokenizer["stop_tokens"] == [
        {
            "id": IM_END,
            "text": "<|im_end|>",
            "source": "tokenizer.mtok",
            "sources": [
                "tokenizer.mtok",
                "tokenizer.mtok eos_token",
                "generation_config.json",
                "llm_config.json jinja.eos",
            ],
        },
        {
            "id": END_OF_TEXT,
            "text": "<|endoftext|>",
            "source": "generation_config.json",
            "sources": ["generation_config.json", "qwen3 end of text"],
        },
    ]
    assert main(["info", str(pack)]) == 0
    assert (
        "1200 <|endoftext|> (generation_config.json, qwen3 end of text)" in capsys.readouterr().out
    )


def test_generation_config_with_one_id_or_none(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    _write_json(pack / "generation_config.json", {"eos_token_id": 700})
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END, 700, END_OF_TEXT)
    assert _stops(pack)[1] == {
        "id": 700,
        "text": None,  # an ordinary token: the tokenizer file does not list its text
        "source": "generation_config.json",
        "sources": ["generation_config.json"],
    }
    _write_json(pack / "generation_config.json", {"do_sample": True})
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END, END_OF_TEXT)


@pytest.mark.parametrize("value", ["<|im_end|>", [1202, -1], [True], {"id": 1}])
def test_bad_generation_config_is_named(bundle_copy: Copy, value: Any) -> None:
    pack = bundle_copy()
    _write_json(pack / "generation_config.json", {"eos_token_id": value})
    with pytest.raises(BadValueError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "generation_config.json"
    assert "eos_token_id" in caught.value.problem


def test_chat_template_end_marker_adds_its_id(bundle_copy: Copy) -> None:
    pack = bundle_copy()
    jinja = json.loads((pack / "llm_config.json").read_text())["jinja"]
    _edit_llm_config(pack, jinja={**jinja, "eos": "<|endoftext|>"})
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END, END_OF_TEXT)
    assert _stops(pack)[1]["sources"] == ["llm_config.json jinja.eos", "qwen3 end of text"]
    # config.json is merged over llm_config.json: a jinja there wins.
    config = json.loads((pack / "config.json").read_text())
    _write_json(pack / "config.json", {**config, "jinja": {"eos": "</think>"}})
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END, END_THINK, END_OF_TEXT)
    assert _stops(pack)[1]["sources"] == ["config.json jinja.eos"]
    # A marker that is not a token of this tokenizer adds nothing.
    _write_json(pack / "config.json", {**config, "jinja": {"eos": "</s>"}})
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END, END_OF_TEXT)


def test_qwen_models_also_end_on_endoftext(bundle_copy: Copy) -> None:
    """llmexport keeps only <|im_end|> and ships no generation_config.json, but every
    Qwen generation config lists <|endoftext|> too: a Qwen pack stops on both."""
    pack = bundle_copy()
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END, END_OF_TEXT)
    assert _stops(pack)[1]["sources"] == ["qwen3 end of text"]
    _edit_llm_config(pack, model_type="llama")
    assert read_bundle(pack).tokenizer.stop_ids == (IM_END,)


def test_a_stop_id_only_one_pack_adds_does_not_block_the_pair(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    draft = bundle_copy("qwen3-draft-noisy")
    _write_json(draft / "generation_config.json", {"eos_token_id": [IM_END, END_OF_TEXT]})
    verdict = assess(read_bundle(fixture_bundle("qwen3-target")), read_bundle(draft))
    assert not verdict.blocked
    assert "stop_ids_mismatch" not in {r.code for r in verdict.reasons}


# -- the engine ------------------------------------------------------------------------------


def test_mnn_decodes_added_tokens_to_nothing_and_the_engine_does_not(
    session: Session, fixture_bundle: Fixture
) -> None:
    session.load(str(fixture_bundle("qwen3-target")), target_config=NORMAL)
    assert session.target is not None
    # MNN 3.6.1's own decode: if this starts failing, MNN fixed it (see mnn_llm.py).
    assert session.target._c.tokenizer_decode(THINK) == ""
    assert session.target.token_bytes(THINK) == b"<think>"
    assert session.target.token_bytes(500) == session.target._c.tokenizer_decode(500).encode()


def test_worker_decodes_added_tokens(client: EngineClient, fixture_bundle: Fixture) -> None:
    client.run(Load(target=str(fixture_bundle("qwen3-target")), target_config=NORMAL))
    done = client.run(Decode(tokens=tuple([THINK, 500, END_THINK, IM_END, END_OF_TEXT])))
    assert done.pieces == ("<think>", " small", "</think>", "<|im_end|>", "<|endoftext|>")
    assert done.text == "".join(done.pieces)


def _emit_as(pack: Path, added: int, like: int) -> None:
    """Give the tied embedding row of `added` twice the weights of row `like`: wherever
    the model would pick `like` (with a positive logit), it picks `added` instead."""
    config = json.loads((pack / "llm_config.json").read_text())
    w_off, alpha_off, alpha_size, bits, _ = config["tie_embeddings"]
    rows = (alpha_off - w_off) * 8 // (bits * config["hidden_size"])
    row_bytes, alpha_floats = (alpha_off - w_off) // rows, alpha_size // rows // 4
    path = pack / "llm.mnn.weight"
    data = bytearray(path.read_bytes())
    source = w_off + like * row_bytes
    data[w_off + added * row_bytes : w_off + (added + 1) * row_bytes] = data[
        source : source + row_bytes
    ]
    # Each block's dequantization is affine in its (bias, scale) pair: doubling both
    # doubles the row.
    alphas = struct.unpack_from(f"<{alpha_floats}f", data, alpha_off + like * alpha_floats * 4)
    doubled = [2 * a for a in alphas]
    struct.pack_into(f"<{alpha_floats}f", data, alpha_off + added * alpha_floats * 4, *doubled)
    path.write_bytes(bytes(data))


def _generate(client: EngineClient, pack: Path, **request: Any) -> tuple[Done, list[Rounds]]:
    client.run(Load(target=str(pack), target_config=NORMAL), timeout=60)
    batches: list[Rounds] = []
    done = client.run(Generate(prompt=PROMPT, **request), on_rounds=batches.append)
    return done, batches


def test_think_tokens_reach_every_text(client: EngineClient, bundle_copy: Copy) -> None:
    pack = bundle_copy()
    plain, _ = _generate(client, pack, max_tokens=12)
    assert THINK not in plain.tokens and "<think>" not in plain.text
    _emit_as(pack, THINK, plain.tokens[3])
    _emit_as(pack, END_THINK, plain.tokens[8])
    done, batches = _generate(client, pack, max_tokens=60)
    tokens = done.tokens
    assert THINK in tokens and END_THINK in tokens
    pieces = [p for b in batches for p in b.pieces]
    marked = {THINK: "<think>", END_THINK: "</think>"}
    assert [p for t, p in zip(tokens, pieces, strict=True) if t in marked] == [
        marked[t] for t in tokens if t in marked
    ]
    assert "".join(b.text for b in batches) == done.text == "".join(pieces)
    # The command line prints the same text.
    recipe = pack.parent / "recipe.json"
    _write_json(recipe, NORMAL)
    args = ["generate", "--target", str(pack), "--recipe", str(recipe), "--prompt", PROMPT]
    proc = run_cli(*args, "--max-tokens", "60", "--greedy", "--json", timeout=120, check=True)
    assert json.loads(proc.stdout)["text"] == done.text


@pytest.mark.parametrize("draft", [None, "qwen3-draft-identical"])
def test_generation_stops_on_a_generation_config_eos(
    draft: str | None, client: EngineClient, bundle_copy: Copy, fixture_bundle: Fixture
) -> None:
    pack = bundle_copy()
    load: dict[str, Any] = {"target": str(pack), "target_config": NORMAL}
    if draft is not None:
        load.update(draft=str(fixture_bundle(draft)), draft_config=NORMAL, draft_length=3)
    client.run(Load(**load), timeout=60)
    first = client.run(Generate(prompt=PROMPT, max_tokens=20))
    assert first.stopped_by == "max_tokens"
    stop = first.tokens[4]
    ends = first.tokens.index(stop) + 1  # the first time the model emits it
    _write_json(pack / "generation_config.json", {"eos_token_id": [IM_END, stop]})
    loaded = client.run(Load(**load), timeout=60)
    assert loaded.target["tokenizer"]["stop_ids"] == [IM_END, stop, END_OF_TEXT]
    done = client.run(Generate(prompt=PROMPT, max_tokens=20))
    assert done.stopped_by == "stop_token"
    assert done.tokens == first.tokens[:ends]


# -- the real Qwen3 tokenizer ----------------------------------------------------------------

# tests/fixtures/make_bundles.py: qwen3-realtok answers any chat prompt with this chain,
# then <|endoftext|>, then <|im_end|>. It ships Qwen3's generation_config.json.
REALTOK_TEXT = "<think>\nOkay, a short answer is enough.\n</think>\n\nHello! 你好 👋"


def test_real_qwen3_pack_stops_on_endoftext_too(fixture_bundle: Fixture) -> None:
    tokenizer = read_bundle(fixture_bundle("qwen3-realtok")).tokenizer
    assert tokenizer.file_stop_ids == (151_645,)  # all llmexport keeps
    assert tokenizer.stop_ids == (151_645, 151_643)
    assert tokenizer.stop_tokens[1].to_json() == {
        "id": 151_643,
        "text": "<|endoftext|>",
        "source": "generation_config.json",
        "sources": ["generation_config.json", "qwen3 end of text"],
    }


def test_real_qwen3_reply_keeps_its_think_block(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    client.run(Load(target=str(fixture_bundle("qwen3-realtok")), target_config=NORMAL))
    batches: list[Rounds] = []
    done = client.run(Generate(prompt="Hi", max_tokens=64), on_rounds=batches.append)
    assert done.stopped_by == "stop_token" and done.tokens[-1] == 151_643
    assert done.text == REALTOK_TEXT
    pieces = [p for b in batches for p in b.pieces]
    assert pieces[:2] == ["<think>", "\n"] and pieces[-1] == ""  # the stop token's
