"""The context window: known for every pack, shown, and enforced wherever the engine runs
(DraftDeck's own loop calls forward() itself, so MNN's max_all_tokens never applies)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.errors import EngineError
from app.core.measure.chat_record import reply_figures_line
from app.core.measure.ram_estimate import estimate_model
from app.core.pack.bundle import read_bundle
from app.core.pack.context_window import MODEL, RECIPE, context_window, pair_window
from app.core.pack.known_models import identify_shape
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import ChatTurn, Generate, Load, Mode
from app.engine.worker.turn_fitting import drop_oldest_turns
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
PROMPT = "Tell me a story about a long river and the towns along it."


def _trained_for(pack: Path, positions: int) -> Path:
    config = json.loads((pack / "llm_config.json").read_text())
    config["max_position_embeddings"] = positions
    (pack / "llm_config.json").write_text(json.dumps(config))
    return pack


def test_the_window_is_the_smaller_of_recipe_and_model(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    plain = read_bundle(fixture_bundle("qwen3-target")).context
    assert (plain.tokens, plain.limited_by, plain.model_limit) == (2048, RECIPE, None)
    trained = read_bundle(_trained_for(bundle_copy(), 40)).context
    assert (trained.tokens, trained.limited_by) == (40, MODEL)
    assert trained.model_source == "max_position_embeddings"
    assert "the model's trained window" in trained.describe()
    # A well-known model's own limit when the exporter did not write one.
    qwen3_8b = identify_shape("qwen3", 4096, 36)
    assert qwen3_8b is not None and qwen3_8b.max_positions == 40960
    roomy = context_window({"max_all_tokens": 65536}, 40960, "Qwen3-8B's published config")
    assert (roomy.tokens, roomy.limited_by) == (40960, MODEL)
    assert pair_window(roomy, trained).tokens == 40


def test_info_json_and_the_memory_estimate_use_the_window(
    fixture_bundle: Fixture, bundle_copy: Copy
) -> None:
    pack = _trained_for(bundle_copy(), 40)
    data = json.loads(run_cli("info", "--json", str(pack), check=True).stdout)
    assert data["context"] == {
        "tokens": 40,
        "recipe_limit": 2048,
        "model_limit": 40,
        "model_source": "max_position_embeddings",
        "limited_by": "model",
    }
    # The KV cache is planned for what can be held, not for a recipe limit past it.
    info = read_bundle(pack)
    assert estimate_model(info, {"max_all_tokens": 4096}).context_tokens == 40
    assert estimate_model(read_bundle(fixture_bundle("qwen3-target")), {}).context_tokens == 2048


def test_a_prompt_over_the_window_is_refused_naming_both_numbers(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    client.run(
        Load(target=str(fixture_bundle("qwen3-target")), target_config={"max_all_tokens": 16})
    )
    with pytest.raises(EngineError) as caught:
        client.run(Generate(prompt=PROMPT, max_tokens=8))
    assert caught.value.code == "context_full"
    message = str(caught.value)
    assert "tokens and the model holds 16 tokens" in message
    assert "raise max_all_tokens" in message


@pytest.mark.parametrize("mode", [Mode.SPECULATIVE, Mode.PLAIN])
def test_a_generation_that_fills_the_window_stops_there(
    mode: Mode, client: EngineClient, fixture_bundle: Fixture
) -> None:
    """The last rounds step the target alone (a verify would overrun the window), and the
    text is still exactly plain decoding's: an identical draft at memory normal."""
    config = {"max_all_tokens": 48, "memory": "normal"}
    client.run(
        Load(
            target=str(fixture_bundle("qwen3-target")),
            draft=str(fixture_bundle("qwen3-draft-identical")),
            target_config=config,
            draft_config=config,
            draft_length=4,
        )
    )
    done = client.run(Generate(prompt=PROMPT, max_tokens=200, mode=mode))
    assert done.stopped_by == "context_full"
    assert done.stats.prompt_tokens + done.stats.tokens == 48 == done.stats.window_tokens
    assert done.stats.max_tokens_asked == 200  # asked for more than fits: said
    assert done.stats.from_draft + done.stats.corrections == done.stats.tokens
    plain = client.run(Generate(prompt=PROMPT, max_tokens=200, mode=Mode.PLAIN))
    assert done.tokens == plain.tokens
    line = reply_figures_line(done.stats.to_json(), mode, done.stopped_by)
    assert "stopped: the 48-token context window is full" in line


def test_the_pairs_window_is_the_smaller_models(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    client.run(
        Load(
            target=str(fixture_bundle("qwen3-target")),
            draft=str(fixture_bundle("qwen3-draft-identical")),
            target_config={"max_all_tokens": 200},
            draft_config={"max_all_tokens": 40},
        )
    )
    done = client.run(Generate(prompt=PROMPT, max_tokens=300))
    assert done.stopped_by == "context_full" and done.stats.window_tokens == 40
    # Plain decoding needs only the target's cache.
    plain = client.run(Generate(prompt=PROMPT, max_tokens=300, mode=Mode.PLAIN))
    assert plain.stats.window_tokens == 200


def test_generate_says_when_the_window_cut_the_reply(
    fixture_bundle: Fixture, tmp_path: Path
) -> None:
    recipe = tmp_path / "small.json"
    recipe.write_text(json.dumps({"max_all_tokens": 40}))
    target = str(fixture_bundle("qwen3-target"))
    done = run_cli(
        "generate", "--target", target, "--recipe", str(recipe), "--prompt", PROMPT,
        "--max-tokens", "100", "--greedy",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "stopped: the 40-token context window is full" in done.stderr
    too_long = run_cli(
        "generate", "--target", target, "--recipe", str(recipe), "--prompt", PROMPT * 5,
    )  # fmt: skip
    assert too_long.returncode == 1
    assert "holds 40 tokens" in too_long.stderr


def test_a_chat_past_its_window_drops_its_oldest_turns_when_asked(
    client: EngineClient, fixture_bundle: Fixture
) -> None:
    """The system message stays, whole turns go from the front, the newest stays; the
    reply says how many messages were left out. Without asking, the same chat is refused."""
    client.run(
        Load(target=str(fixture_bundle("qwen3-target")), target_config={"max_all_tokens": 96})
    )
    turns = [ChatTurn("system", "Be brief.")]
    for i in range(6):
        turns += [ChatTurn("user", f"{PROMPT} Part {i}."), ChatTurn("assistant", "A reply.")]
    turns.append(ChatTurn("user", "And now?"))
    with pytest.raises(EngineError) as caught:
        client.run(Generate(messages=tuple(turns), max_tokens=8))
    assert caught.value.code == "context_full"
    done = client.run(Generate(messages=tuple(turns), max_tokens=8, drop_oldest=True))
    dropped = done.stats.dropped_messages
    assert dropped > 0 and dropped % 2 == 0  # whole turns
    assert done.stats.prompt_tokens + min(8, 96 // 4) <= 96
    assert done.stats.tokens == 8
    # Nothing more is dropped than needed: one turn fewer would not leave a reply room.
    kept_one_more = (turns[0], *turns[1 + dropped - 2 :])
    tight = client.run(Generate(messages=kept_one_more, max_tokens=8, drop_oldest=True))
    assert tight.stats.dropped_messages == 2


def test_turn_fitting_keeps_the_system_and_the_newest_turn() -> None:
    messages = ["s:sys", "u:1", "a:1", "u:2", "a:2", "u:3"]
    role = {"s": "system", "u": "user", "a": "assistant"}

    def fits_under(n: int) -> Callable[[list[str]], bool]:
        return lambda kept: len(kept) <= n

    assert drop_oldest_turns(messages, lambda m: role[m[0]], fits_under(6)) == (messages, 0)
    assert drop_oldest_turns(messages, lambda m: role[m[0]], fits_under(4)) == (
        ["s:sys", "u:2", "a:2", "u:3"],
        2,
    )
    assert drop_oldest_turns(messages, lambda m: role[m[0]], fits_under(2)) == (["s:sys", "u:3"], 4)
    assert drop_oldest_turns(messages, lambda m: role[m[0]], fits_under(1)) is None
