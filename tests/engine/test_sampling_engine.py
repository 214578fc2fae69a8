"""Sampling in the real engine on the tiny fixture pairs (real MNN, worker process).

Exactness: generations under speculative sampling and under plain sampling from the
target, with disjoint fixed seeds, must look like one distribution at the first
positions (chi-square test of homogeneity, threshold p > 1e-3; the seeds are fixed, so
each p-value is a fixed number and the test cannot flake). The same test must reject a
sampler that is only a little off: plain sampling at another temperature. The
deliberately wrong acceptance rules (accepting on equality, skipping the residual) fail
the exactness test in test_sampling.py, where they can be swapped in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path

import pytest

from app.core.recipe.drafting_settings import DraftingSettings
from app.core.recipe.sampler_settings import SamplerSettings, sampler_settings
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Done, Generate, Load, Mode
from tests.helpers.chi_square import same_distribution_p_value

Fixture = Callable[[str], Path]
FIXED = DraftingSettings(adaptive=False)
# The noisy draft's top-1 probability after top-k 20 is often below one half.
STOPPING = DraftingSettings(adaptive=False, stop_below=0.5)
ADAPTIVE = DraftingSettings(adaptive=True)
NORMAL = {"memory": "normal"}  # exact numerics: greedy outputs must match token for token
PROMPT = (1, 2, 3, 4, 5)
SAMPLES = 800
THRESHOLD = 1e-3
NOISY_T1_TOPK = {"mixed_samplers": ["topK", "temperature"], "temperature": 1.0, "top_k": 20}
INDEPENDENT_HOT_TOPP = {
    "mixed_samplers": ["topK", "topP", "temperature"],
    "temperature": 1.5,
    "top_k": 0,
    "top_p": 0.95,
}


@pytest.fixture
def pair(fixture_bundle: Fixture) -> Iterator[Callable[[str], EngineClient]]:
    clients: list[EngineClient] = []

    def load(draft: str) -> EngineClient:
        client = EngineClient()
        clients.append(client)
        client.start()
        client.run(
            Load(
                target=str(fixture_bundle("qwen3-target")),
                draft=str(fixture_bundle(draft)),
                target_config=NORMAL,
                draft_config=NORMAL,
                draft_length=3,
            ),
            timeout=60,
        )
        return client

    yield load
    for client in clients:
        client.close()


def _generate(
    client: EngineClient,
    sampler: SamplerSettings | None,
    seed: int | None,
    mode: Mode | None = None,
    tokens: int = 4,
    drafting: DraftingSettings = FIXED,
) -> Done:
    request = Generate(
        prompt_ids=PROMPT,
        max_tokens=tokens,
        ignore_stop=True,
        mode=mode,
        sampler=sampler,
        seed=seed,
        drafting=drafting,
    )
    return client.run(request, timeout=60)


def _positions(
    client: EngineClient,
    sampler: SamplerSettings,
    seeds: range,
    mode: Mode,
    drafting: DraftingSettings = FIXED,
    drafted: list[int] | None = None,
) -> list[tuple[int, ...]]:
    """The tokens of one generation per seed; `drafted` collects each one's drafted count.
    Adaptive drafting gets no seed (a fresh one each): with a seed the engine drafts the
    fixed length, since lengths that follow the machine's speed would not repeat a draw."""
    out = []
    for seed in seeds:
        adaptive = mode == Mode.SPECULATIVE and drafting.adaptive
        done = _generate(client, sampler, None if adaptive else seed, mode, drafting=drafting)
        assert done.stats.drafting == ("adaptive" if adaptive else "fixed")
        out.append(done.tokens)
        if drafted is not None:
            drafted.append(done.stats.drafted)
    return out


def _p_values(a: list[tuple[int, ...]], b: list[tuple[int, ...]]) -> dict[str, float]:
    """Positions 1-3 come from rounds (position 0 from the prefill, in both modes)."""
    views: dict[str, Callable[[tuple[int, ...]], Hashable]] = {
        "position 1": lambda t: t[1],
        "position 2": lambda t: t[2],
        "position 3": lambda t: t[3],
        "positions 0-2": lambda t: t[:3],
    }
    return {
        name: same_distribution_p_value(Counter(map(view, a)), Counter(map(view, b)))
        for name, view in views.items()
    }


@pytest.mark.parametrize(
    ("draft", "recipe", "drafting"),
    [
        ("qwen3-draft-noisy", NOISY_T1_TOPK, FIXED),
        ("qwen3-draft-independent", INDEPENDENT_HOT_TOPP, FIXED),
        ("qwen3-draft-noisy", NOISY_T1_TOPK, STOPPING),
        ("qwen3-draft-noisy", NOISY_T1_TOPK, ADAPTIVE),
    ],
    ids=[
        "noisy-T1-topk20",
        "independent-T1.5-topp0.95",
        "noisy-per-round-stop",
        "noisy-adaptive",
    ],
)
def test_speculative_sampling_is_distributed_as_plain_sampling(
    pair: Callable[[str], EngineClient],
    draft: str,
    recipe: dict[str, object],
    drafting: DraftingSettings,
) -> None:
    client = pair(draft)
    sampler = sampler_settings(recipe)
    drafted: list[int] = []
    speculative = _positions(client, sampler, range(SAMPLES), Mode.SPECULATIVE, drafting, drafted)
    if drafting == STOPPING:
        # Rounds of every length were drafted: the stop shortened some, not all.
        assert sum(drafted) > SAMPLES and len(set(drafted)) > 2, Counter(drafted)
    elif drafting == ADAPTIVE:
        # How much it drafts follows the measured speed (this machine's); it always
        # drafts before its first judgement, so speculative rounds were checked.
        assert sum(drafted) > 0, Counter(drafted)
    plain = _positions(client, sampler, range(10**6, 10**6 + SAMPLES), Mode.PLAIN)
    assert len(set(speculative)) > 20, "too peaked to say anything"
    p_values = _p_values(speculative, plain)
    assert min(p_values.values()) > THRESHOLD, p_values
    # The same test rejects a sampler that is only a little off.
    warmer = sampler_settings({**recipe, "temperature": float(str(recipe["temperature"])) * 1.3})
    off = _positions(client, warmer, range(2 * 10**6, 2 * 10**6 + SAMPLES), Mode.PLAIN)
    assert min(_p_values(speculative, off).values()) < THRESHOLD


def test_an_identical_draft_accepts_everything_and_gives_the_plain_text(
    pair: Callable[[str], EngineClient],
) -> None:
    client = pair("qwen3-draft-identical")
    sampler = sampler_settings(INDEPENDENT_HOT_TOPP)
    for seed in range(20):
        speculative = _generate(client, sampler, seed, Mode.SPECULATIVE, tokens=24)
        stats = speculative.stats
        assert stats.drafted > 0 and stats.acceptance == 1.0
        assert stats.expected_acceptance == pytest.approx(1.0, abs=1e-5)
        assert speculative.tokens == _generate(client, sampler, seed, Mode.PLAIN, tokens=24).tokens


def test_seeds_reproduce_and_the_figures_add_up(pair: Callable[[str], EngineClient]) -> None:
    client = pair("qwen3-draft-noisy")
    sampler = sampler_settings(INDEPENDENT_HOT_TOPP)
    first = _generate(client, sampler, 7, tokens=40)
    assert _generate(client, sampler, 7, tokens=40).tokens == first.tokens
    others = {_generate(client, sampler, seed, tokens=40).tokens for seed in range(8, 12)}
    assert first.tokens not in others
    stats = first.stats
    assert stats.seed == 7 and stats.sampler == sampler.describe()
    # Every checked position has its expected acceptance, and it is a probability.
    assert len(stats.position_expected) == stats.draft_length
    pairs = zip(stats.position_expected, stats.position_reached, strict=True)
    assert all(0.0 <= expected <= reached + 1e-9 for expected, reached in pairs)
    assert 0.0 < (stats.expected_acceptance or 0.0) < 1.0
    # A fresh seed is reported, and reproduces the text.
    fresh = _generate(client, sampler, None, tokens=40)
    assert fresh.stats.seed is not None
    assert _generate(client, sampler, fresh.stats.seed, tokens=40).tokens == fresh.tokens


@pytest.mark.parametrize(
    "recipe",
    [{"sampler_type": "greedy"}, {"mixed_samplers": ["topK", "greedy"], "top_k": 5}],
    ids=["greedy", "mixed-ending-in-greedy"],
)
def test_a_greedy_recipe_gives_todays_greedy_output(
    pair: Callable[[str], EngineClient], recipe: dict[str, object]
) -> None:
    client = pair("qwen3-draft-noisy")
    for mode in (Mode.SPECULATIVE, Mode.PLAIN):
        greedy = _generate(client, None, None, mode, tokens=40)
        assert _generate(client, sampler_settings(recipe), 3, mode, tokens=40).tokens == (
            greedy.tokens
        )
    assert greedy.stats.sampler == "greedy" and greedy.stats.seed is None
