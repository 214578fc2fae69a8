"""The recipe's sampler and exact speculative sampling (issue #19), in numpy only.

Exactness is tested statistically but deterministically: every sample comes from a
fixed seed, so each chi-square statistic below is a fixed number and the tests cannot
flake. A correct rule must give p-value > 1e-3 against the target's exact distribution
(computed by enumeration); the deliberately wrong rules must give p-value < 1e-6 on
the same test.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pytest

from app.core.recipe.sampler_settings import (
    GREEDY,
    SamplerSettings,
    sampler_settings,
    with_overrides,
)
from app.engine.worker import nucleus
from app.engine.worker import sampler as sampler_module
from app.engine.worker.sampler import TokenDist, adjusted_probs
from app.engine.worker.speculative_sampling import SpeculativeSampler, Verdict
from tests.helpers.chi_square import chi2_sf

F32 = npt.NDArray[np.float32]
Model = Callable[[Sequence[int]], F32]
Verifier = Callable[[SpeculativeSampler, F32, list[int], list[TokenDist], list[int]], Verdict]

PASS = 1e-3  # a correct rule's p-value is above this
FAIL = 1e-6  # a wrong rule's p-value is below this
PREFIX = [0, 1]


# -- statistics ------------------------------------------------------------------------


def test_chi2_sf_matches_tables() -> None:
    assert chi2_sf(3.841459, 1) == pytest.approx(0.05, rel=1e-5)
    assert chi2_sf(18.307038, 10) == pytest.approx(0.05, rel=1e-5)
    assert chi2_sf(5.0, 10) == pytest.approx(0.891178, rel=1e-5)


def p_value(observed: Counter[tuple[int, ...]], exact: dict[tuple[int, ...], float]) -> float:
    """Pearson's test; cells expecting fewer than 5 are pooled into one."""
    n = sum(observed.values())
    assert set(observed) <= {k for k, v in exact.items() if v > 0.0}, "impossible outcome"
    stat, cells, pooled_o, pooled_e = 0.0, 0, 0.0, 0.0
    for key, prob in exact.items():
        e = n * prob
        if e < 5.0:
            pooled_o, pooled_e = pooled_o + observed[key], pooled_e + e
        else:
            stat, cells = stat + (observed[key] - e) ** 2 / e, cells + 1
    if pooled_e > 0.0:
        stat, cells = stat + (pooled_o - pooled_e) ** 2 / max(pooled_e, 1e-12), cells + 1
    return chi2_sf(stat, cells - 1)


def exact_joint(
    target: Model, settings: SamplerSettings, length: int
) -> dict[tuple[int, ...], float]:
    """The target sampler's distribution of the first `length` tokens, by enumeration."""
    out: dict[tuple[int, ...], float] = {(): 1.0}
    for _ in range(length):
        grown: dict[tuple[int, ...], float] = {}
        for seq, prob in out.items():
            history = PREFIX + list(seq)
            dist = adjusted_probs(target(history), settings, history)
            for token, p in zip(dist.tokens.tolist(), dist.probs.tolist(), strict=True):
                if p > 0.0:
                    longer = (*seq, token)
                    grown[longer] = prob * p
        out = grown
    return out


def marginal(joint: dict[tuple[int, ...], float], at: int) -> dict[tuple[int, ...], float]:
    out: dict[tuple[int, ...], float] = {}
    for seq, prob in joint.items():
        out[(seq[at],)] = out.get((seq[at],), 0.0) + prob
    return out


# -- toy models and the decoding loops -----------------------------------------------


def context_free(row: F32) -> Model:
    return lambda history: row


def markov(table: F32) -> Model:
    return lambda history: table[history[-1]]


def logits(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> F32:
    return (rng.normal(size=shape) * scale).astype(np.float32)


def speculative(
    sampler: SpeculativeSampler,
    target: Model,
    draft: Model,
    length: int,
    d: int = 3,
    verifier: Verifier | None = None,
) -> tuple[list[int], list[Verdict]]:
    """The decoder's loop without the models' caches."""
    seq, out = list(PREFIX), list[int]()
    verdicts: list[Verdict] = []
    while len(out) < length:
        proposal: list[int] = []
        qs: list[TokenDist] = []
        for _ in range(d):
            token, q = sampler.draw(draft(seq + proposal), seq + proposal)
            proposal.append(token)
            qs.append(q)
        rows = np.stack([target(seq + proposal[:i]) for i in range(d + 1)])
        if verifier is None:
            verdict = sampler.verify(rows, proposal, qs, seq)
        else:
            verdict = verifier(sampler, rows, proposal, qs, seq)
        verdicts.append(verdict)
        new = [*proposal[: verdict.accepted], verdict.token]
        seq += new
        out += new
    return out[:length], verdicts


def plain(sampler: SpeculativeSampler, target: Model, length: int) -> list[int]:
    seq = list(PREFIX)
    for _ in range(length):
        token, _ = sampler.draw(target(seq), seq)
        seq.append(token)
    return seq[len(PREFIX) :]


def accept_if_equal_to_target_sample(
    sampler: SpeculativeSampler,
    rows: F32,
    proposal: list[int],
    qs: list[TokenDist],
    history: list[int],
) -> Verdict:
    """WRONG: keep the proposal when a draw from p happens to equal it, else that draw."""
    rng = np.random.default_rng(len(history) * 7919 + proposal[0])
    seen = list(history)
    for i, token in enumerate(proposal):
        drawn = sampler.distribution(rows[i], seen).pick(rng.random())
        if drawn != token:
            return Verdict(i, drawn, [])
        seen.append(token)
    return Verdict(len(proposal), sampler.draw(rows[-1], seen)[0], [])


def no_residual(
    sampler: SpeculativeSampler,
    rows: F32,
    proposal: list[int],
    qs: list[TokenDist],
    history: list[int],
) -> Verdict:
    """WRONG: on rejection draw from p instead of normalise(max(0, p - q))."""
    rng = np.random.default_rng(len(history) * 7919 + proposal[0])
    seen = list(history)
    for i, token in enumerate(proposal):
        p = sampler.distribution(rows[i], seen)
        if rng.random() * qs[i].prob(token) >= p.prob(token):
            return Verdict(i, p.pick(rng.random()), [])
        seen.append(token)
    return Verdict(len(proposal), sampler.draw(rows[-1], seen)[0], [])


def samples(
    settings: SamplerSettings,
    target: Model,
    draft: Model,
    n: int,
    seed: int,
    verifier: Verifier | None = None,
) -> list[list[int]]:
    return [
        speculative(
            SpeculativeSampler(settings, seed * 1_000_003 + i), target, draft, 3, verifier=verifier
        )[0]
        for i in range(n)
    ]


def p_values(runs: list[list[int]], exact: dict[tuple[int, ...], float]) -> list[float]:
    """Joint of the first two tokens, and each of positions 1..3 alone."""
    joint2: dict[tuple[int, ...], float] = {}
    for seq, prob in exact.items():
        joint2[seq[:2]] = joint2.get(seq[:2], 0.0) + prob
    out = [p_value(Counter(tuple(r[:2]) for r in runs), joint2)]
    for at in range(3):
        out.append(p_value(Counter((r[at],) for r in runs), marginal(exact, at)))
    return out


# -- exactness ---------------------------------------------------------------------------

MIXED = {"sampler_type": "mixed", "mixed_samplers": ["topK", "topP", "temperature"]}

CASES = [
    # name, vocab, markov?, logit scale (peaked/flat), temperature, extra recipe, draft
    ("free-peaked-noisy-T1", 12, False, 2.5, 1.0, {"top_k": 0, "top_p": 1.0}, "noisy"),
    (
        "free-flat-independent-T0.7-topk",
        30,
        False,
        0.6,
        0.7,
        {"top_k": 8, "top_p": 1.0},
        "independent",
    ),
    ("markov-noisy-T1.3-topp", 8, True, 1.5, 1.3, {"top_k": 0, "top_p": 0.8}, "noisy"),
    (
        "markov-independent-T0.6-topk-topp",
        10,
        True,
        2.0,
        0.6,
        {"top_k": 6, "top_p": 0.95},
        "independent",
    ),
]


def case(name: str) -> tuple[SamplerSettings, Model, Model]:
    _, vocab, is_markov, scale, temperature, extra, kind = next(c for c in CASES if c[0] == name)
    rng = np.random.default_rng(sum(name.encode()))
    shape = (vocab, vocab) if is_markov else (vocab,)
    p = logits(rng, shape, scale)
    q = p + logits(rng, shape, 0.8) if kind == "noisy" else logits(rng, shape, scale)
    make = markov if is_markov else context_free
    settings = sampler_settings({**MIXED, "temperature": temperature, **extra})
    return settings, make(p), make(q)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_speculative_sampling_matches_the_target(name: str) -> None:
    settings, target, draft = case(name)
    runs = samples(settings, target, draft, 2500, seed=len(name))
    values = p_values(runs, exact_joint(target, settings, 3))
    assert min(values) > PASS, values


@pytest.mark.parametrize("verifier", [accept_if_equal_to_target_sample, no_residual])
def test_wrong_rules_fail_the_same_test(verifier: Verifier) -> None:
    name = "free-flat-independent-T0.7-topk"
    settings, target, draft = case(name)
    # The correct rule passes this very case in test_speculative_sampling_matches_the_target.
    runs = samples(settings, target, draft, 1000, seed=len(name), verifier=verifier)
    wrong = p_values(runs, exact_joint(target, settings, 3))
    assert max(wrong) < FAIL, wrong


def test_identical_draft_is_always_accepted_and_gives_the_plain_text() -> None:
    rng = np.random.default_rng(5)
    table = logits(rng, (40, 40), 1.0)
    settings = sampler_settings({**MIXED, "temperature": 0.8, "top_k": 10, "top_p": 0.95})
    for seed in range(20):
        out, verdicts = speculative(
            SpeculativeSampler(settings, seed), markov(table), markov(table), 24
        )
        assert all(v.accepted == 3 for v in verdicts)
        assert all(
            e == pytest.approx(1.0, abs=1e-12) for v in verdicts for e in v.expected_acceptance
        )
        # Same seed, same text: the token stream is indexed by position.
        assert out == plain(SpeculativeSampler(settings, seed), markov(table), 24)


def test_expected_acceptance_is_the_overlap_and_the_rate_a_draft_is_accepted_at() -> None:
    """Ground truth for the figure shown beside acceptance: sum_v min(p, q) of the two
    softmaxes computed here, and the rate at which draws from q are accepted."""
    rng = np.random.default_rng(9)
    p_row, q_row = logits(rng, (12,), 1.0), logits(rng, (12,), 1.0)
    settings = sampler_settings({"mixed_samplers": ["temperature"], "temperature": 1.0})
    p = np.exp(p_row - p_row.max()) / np.exp(p_row - p_row.max()).sum()
    q = np.exp(q_row - q_row.max()) / np.exp(q_row - q_row.max()).sum()
    overlap = float(np.minimum(p, q).sum())
    assert 0.3 < overlap < 0.95  # a draft neither identical nor unrelated
    sampler = SpeculativeSampler(settings, 3)
    q_dist = sampler.distribution(q_row, [])
    tokens = rng.choice(12, size=20_000, p=q)
    checks = [sampler.check(p_row, int(t), q_dist, []) for t in tokens]
    assert all(c.expected_acceptance == pytest.approx(overlap, abs=1e-6) for c in checks)
    rate = sum(c.accepted for c in checks) / len(checks)
    # Fixed seeds: a fixed number; 5 binomial standard deviations is the allowance.
    assert abs(rate - overlap) < 5 * math.sqrt(overlap * (1 - overlap) / len(checks))


def test_seeds_reproduce() -> None:
    settings, target, draft = case("markov-noisy-T1.3-topp")
    first = speculative(SpeculativeSampler(settings, 42), target, draft, 30)
    again = speculative(SpeculativeSampler(settings, 42), target, draft, 30)
    other = speculative(SpeculativeSampler(settings, 43), target, draft, 30)
    assert first == again
    assert first[0] != other[0]
    assert plain(SpeculativeSampler(settings, 7), target, 30) == plain(
        SpeculativeSampler(settings, 7), target, 30
    )
    assert SpeculativeSampler(settings).seed != SpeculativeSampler(settings).seed


def decoder_greedy_rule(rows: F32, proposal: list[int]) -> tuple[int, int]:
    """decoder.py's rule today."""
    guesses = np.argmax(rows, axis=-1)
    n = 0
    while n < len(proposal) and proposal[n] == int(guesses[n]):
        n += 1
    return n, int(guesses[n])


@pytest.mark.parametrize(
    "settings",
    [
        GREEDY,
        sampler_settings({"sampler_type": "greedy"}),
        with_overrides(sampler_settings({}), greedy=True),
        with_overrides(sampler_settings({"sampler_type": "temperature"}), temperature=0.0),
    ],
)
def test_greedy_settings_reproduce_the_greedy_rule(settings: SamplerSettings) -> None:
    rng = np.random.default_rng(9)
    for trial in range(300):
        # Small integer logits: many ties, which must break as np.argmax does.
        rows = rng.integers(0, 4, size=(4, 50)).astype(np.float32)
        drafts = rng.integers(0, 4, size=(3, 50)).astype(np.float32)
        sampler = SpeculativeSampler(settings, trial)
        proposal, qs = [], []
        for row in drafts:
            token, q = sampler.draw(row, PREFIX)
            assert token == int(np.argmax(row))
            proposal.append(token)
            qs.append(q)
        if trial % 3 == 0:
            proposal[: trial % 4] = [int(g) for g in np.argmax(rows, axis=-1)[: trial % 4]]
        verdict = sampler.verify(rows, proposal, qs, PREFIX)
        assert (verdict.accepted, verdict.token) == decoder_greedy_rule(rows, proposal)


# -- the sampler's steps ---------------------------------------------------------------


def probs_of(dist: TokenDist) -> dict[int, float]:
    return dict(zip(dist.tokens.tolist(), dist.probs.tolist(), strict=True))


def softmax(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    e: npt.NDArray[np.float64] = np.exp(x - x.max())
    return e / float(e.sum())


def test_penalties_apply_over_the_history() -> None:
    settings = sampler_settings(
        {
            "sampler_type": "penalty",
            "penalty": 2.0,
            "presence_penalty": 0.5,
            "frequency_penalty": 0.25,
            "penalty_sampler": "temperature",
        }
    )
    assert settings.temperature == 0.8  # MNN's penalty sampler never reads temperature
    row = np.array([2.0, 2.0, 0.5, -2.0, 1.0], dtype=np.float32)
    got = probs_of(adjusted_probs(row, settings, [1, 1, 3]))
    # token 1: 2 / 2 - 0.5 - 0.25 * 2; token 3: -2 * 2 - 0.5 - 0.25 * 1
    want = softmax(np.array([2.0, 0.0, 0.5, -4.75, 1.0]) / 0.8)
    assert list(got.values()) == pytest.approx(want.tolist(), rel=1e-12)
    assert probs_of(adjusted_probs(row, settings, [])) == pytest.approx(
        dict(enumerate(softmax(row.astype(np.float64) / 0.8).tolist()))
    )
    window = sampler_settings({"sampler_type": "penalty", "penalty": 2.0, "penalty_window": 1})
    assert window.is_greedy  # penalty_sampler defaults to greedy
    # Only the last token is in the window: token 0 keeps its logit and wins the tie.
    assert adjusted_probs(row, window, [1, 0]).tokens.tolist() == [1]


def test_ngram_penalty() -> None:
    settings = sampler_settings(
        {
            "sampler_type": "penalty",
            "penalty": 1.2,
            "n_gram": 3,
            "ngram_factor": 1.5,
            "penalty_sampler": "temperature",
        }
    )
    row = np.full(8, 1.0, dtype=np.float32)
    got = probs_of(adjusted_probs(row, settings, [5, 6, 7, 5, 6]))
    # "5 6" was followed by 7 before: 7 gets max_penalty; 5 and 6 the plain 1.2.
    want = softmax(np.array([1, 1, 1, 1, 1, 1 / 1.2, 1 / 1.2, 1 / 10.0]) / 0.8)
    assert list(got.values()) == pytest.approx(want.tolist(), rel=1e-12)


def test_truncations() -> None:
    row = np.log(np.array([0.05, 0.4, 0.3, 0.15, 0.1], dtype=np.float64)).astype(np.float32)

    def kept(recipe: dict[str, object]) -> list[int]:
        settings = sampler_settings({"temperature": 1.0, **recipe})
        return [int(t) for t in adjusted_probs(row, settings, []).tokens]

    assert kept({"sampler_type": "topK", "top_k": 2}) == [1, 2]
    assert kept({"sampler_type": "topK", "top_k": 0}) == [0, 1, 2, 3, 4]  # 0: no limit
    assert kept({"sampler_type": "topP", "top_p": 0.7}) == [1, 2]  # reaching 0.7 counts
    assert kept({"sampler_type": "topP", "top_p": 0.71}) == [1, 2, 3]
    assert kept({"sampler_type": "minP", "min_p": 0.12}) == [1, 2, 3]  # absolute
    assert kept({"sampler_type": "minP", "min_p": 0.9}) == [1]
    assert len(kept({"sampler_type": "tfs", "tfs_z": 1.0})) <= 3  # drops the last two
    assert kept({"sampler_type": "typical", "typical": 1.0}) == [0, 1, 2, 3, 4]
    # Each step renormalises over what is left: top-p after top-k sees 0.4/0.7 first.
    assert kept({"mixed_samplers": ["topK", "topP"], "top_k": 2, "top_p": 0.5}) == [1]
    assert kept({"mixed_samplers": ["topP", "topK"], "top_k": 2, "top_p": 0.5}) == [1, 2]
    # sampler_type topK never reads the temperature: MNN's 0.8 applies.
    top2 = adjusted_probs(row, sampler_settings({"sampler_type": "topK", "top_k": 2}), [])
    assert top2.probs.tolist() == pytest.approx(softmax(np.log([0.4, 0.3]) / 0.8).tolist())


def test_top_p_shortcut_over_a_large_vocabulary_matches_a_full_sort() -> None:
    rng = np.random.default_rng(3)
    for scale in (0.3, 4.0):  # flat: falls back to the full sort; peaked: the shortcut
        row = (rng.normal(size=20_000) * scale).astype(np.float32)
        dist = adjusted_probs(
            row, sampler_settings({"sampler_type": "topP", "top_p": 0.9, "temperature": 0.7}), []
        )
        p = softmax(row.astype(np.float64) / 0.7)
        order = np.argsort(-p, kind="stable")
        count = int(np.searchsorted(np.cumsum(p[order]), 0.9)) + 1
        assert dist.tokens.tolist() == sorted(order[:count].tolist())


def test_logit_bias_and_banned_tokens() -> None:
    settings = sampler_settings(
        {"mixed_samplers": ["temperature"], "logit_bias": {"2": 5.0}, "banned_tokens": [1]}
    )
    assert settings.steps == ("logit_bias", "banned_tokens")
    got = probs_of(adjusted_probs(np.zeros(4, dtype=np.float32), settings, []))
    assert got[1] == 0.0
    assert got[2] == pytest.approx(math.exp(5.0) / (math.exp(5.0) + 2.0))


# -- reading the recipe ----------------------------------------------------------------


def test_defaults_are_mnns() -> None:
    s = sampler_settings({})
    assert s.steps == ("topK", "tfs", "typical", "topP", "minP")
    assert not s.greedy
    assert (s.temperature, s.top_k, s.top_p, s.min_p, s.tfs_z, s.typical) == (
        1.0,
        40,
        0.9,
        0.1,
        1.0,
        1.0,
    )
    assert (s.repetition_penalty, s.presence_penalty, s.frequency_penalty) == (1.0, 0.0, 0.0)


def test_key_precedence() -> None:
    assert sampler_settings({"top_k": 5, "topK": 7}).top_k == 5
    assert sampler_settings({"top_k": -1, "topK": 7}).top_k == 7
    assert sampler_settings({"topK": 7}).top_k == 7
    assert sampler_settings({"top_p": 0.5, "topP": 0.7}).top_p == 0.5
    assert sampler_settings({"topP": 0.7}).top_p == 0.7
    assert sampler_settings({"minP": 0.2}).min_p == 0.2
    assert sampler_settings({"min_p": 0.3, "minP": 0.2}).min_p == 0.3
    assert sampler_settings({"tfsZ": 0.5}).tfs_z == 0.5
    assert (
        sampler_settings({"mixed_samplers": ["penalty"], "penalty": 1.3}).repetition_penalty == 1.3
    )
    assert (
        sampler_settings(
            {"mixed_samplers": ["penalty"], "repetition_penalty": 1.1, "penalty": 1.3}
        ).repetition_penalty
        == 1.1
    )


def test_each_type_reads_only_its_keys() -> None:
    recipe = {"temperature": 0.3, "top_k": 5}
    assert sampler_settings({**recipe, "sampler_type": "topK"}).temperature == 0.8
    assert sampler_settings({**recipe, "sampler_type": "topP"}).temperature == 0.3
    assert sampler_settings({**recipe, "sampler_type": "topP"}).top_k == 40
    assert sampler_settings({**recipe, "sampler_type": "temperature"}).steps == ()
    assert (
        sampler_settings(
            {**recipe, "sampler_type": "mixed", "mixed_samplers": ["topK"]}
        ).temperature
        == 0.8
    )
    with pytest.raises(ValueError):
        sampler_settings({"sampler_type": "beam"})
    with pytest.raises(ValueError):
        sampler_settings({"mixed_samplers": ["topK", "beam"]})


def test_mixed_order() -> None:
    s = sampler_settings({"mixed_samplers": ["topP", "temperature", "penalty", "topK", "min_p"]})
    assert s.steps == ("penalty", "topP", "topK", "minP")
    assert not s.greedy
    assert sampler_settings({"mixed_samplers": ["topK", "greedy"]}).greedy
    assert sampler_settings({"mixed_samplers": ["greedy", "topK"]}).greedy is False


def test_overrides() -> None:
    base = sampler_settings({"sampler_type": "temperature", "temperature": 0.7})
    s = with_overrides(base, temperature=0.6, top_k=20, top_p=0.95)
    assert (s.temperature, s.top_k, s.top_p, s.steps) == (0.6, 20, 0.95, ("topK", "topP"))
    assert with_overrides(sampler_settings({}), top_p=0.5).steps == sampler_settings({}).steps
    assert with_overrides(s, greedy=True) == GREEDY
    assert with_overrides(GREEDY, temperature=0.6).is_greedy is False
    assert with_overrides(s, temperature=0.0).is_greedy
    assert s.describe() == "temperature 0.6, topK 20, topP 0.95"


# -- fast truncations give the argsort answers (app/engine/worker/nucleus.py) ------------


def ref_top_p(probs: npt.NDArray[np.float64], top_p: float) -> list[int]:
    """The sort-based top-p: stable descending order, keep until the sum reaches top_p."""
    order = np.argsort(-probs, kind="stable")
    cum = np.cumsum(probs[order])
    return sorted(order[: min(int(np.searchsorted(cum, top_p)) + 1, len(order))].tolist())


def ref_tfs(probs: npt.NDArray[np.float64], z: float) -> list[int]:
    if len(probs) < 3:
        return list(range(len(probs)))
    order = np.argsort(-probs, kind="stable")
    second = np.abs(np.diff(probs[order], 2))
    total = second.sum()
    if total > 0.0:
        second /= total
    return sorted(order[: max(1, int(np.searchsorted(np.cumsum(second), z)))].tolist())


def ref_typical(probs: npt.NDArray[np.float64], mass: float) -> list[int]:
    with np.errstate(divide="ignore"):
        logp = np.log(probs)
    entropy = -float(np.sum(probs[probs > 0.0] * logp[probs > 0.0]))
    order = np.argsort(np.abs(entropy + logp), kind="stable")
    cum = np.cumsum(probs[order])
    return sorted(order[: min(int(np.searchsorted(cum, mass)) + 1, len(order))].tolist())


def ref_softmax(values: npt.NDArray[np.float32], temperature: float) -> npt.NDArray[np.float64]:
    """sampler._softmax before the skip of underflowing exps (the > 4096 path)."""
    y = values.astype(np.float32)
    y -= y.max()
    y *= np.float32(1.0 / temperature)
    np.exp(y, out=y)
    out = y.astype(np.float64)
    out /= out.sum()
    return out


def prob_rows() -> list[npt.NDArray[np.float64]]:
    """Flat, peaked, with ties and zeros, tiny and large, as the sampler makes them."""
    rng = np.random.default_rng(19)
    rows = []
    for size in (1, 2, 3, 4, 5, 7, 16, 100, 3000, 20_000):
        for scale in (0.0, 0.05, 1.0, 6.0, 60.0):
            logits = (rng.normal(size=size) * scale).astype(np.float32)
            if size > 4:  # exact ties, also at the top
                logits[rng.integers(0, size, size // 3)] = logits[int(np.argmax(logits))]
                if scale == 1.0:
                    logits = (np.round(logits * 4) / 4).astype(np.float32)
            rows.append(sampler_module._softmax(logits, 0.7))
    rows.append(np.array([0.5, 0.25, 0.25, 0.0, 0.0]))
    rows.append(np.full(12, 1 / 12))
    return rows


def thresholds(probs: npt.NDArray[np.float64]) -> list[float]:
    """Plain values, 0 and 1, and cumulative sums hit exactly and one ulp either side."""
    cum = np.cumsum(np.sort(probs)[::-1])
    picks = [cum[0], cum[len(cum) // 2], cum[-1], cum[max(0, len(cum) - 3)]]
    near = [float(np.nextafter(c, d)) for c in picks for d in (-1.0, 2.0)]
    return [0.0, 1e-9, 0.3, 0.9, 0.95, 1.0, 1.0 + 1e-15, *map(float, picks), *near]


def test_fast_truncations_match_the_argsort_reference() -> None:
    cases = 0
    for probs in prob_rows():
        every = list(range(len(probs)))
        for t in thresholds(probs):
            got = nucleus.top_p(probs, t)
            assert (every if got is None else got.tolist()) == ref_top_p(probs, t), (len(probs), t)
            got = nucleus.tfs(probs, t)
            assert (every if got is None else got.tolist()) == ref_tfs(probs, t), (len(probs), t)
            got = nucleus.typical(probs, t)
            assert (every if got is None else got.tolist()) == ref_typical(probs, t)
            cases += 1
    assert cases > 500


def test_fast_truncations_on_peaked_rows_with_zeros() -> None:
    # Wide logits (as the random-weight bench target's): most probabilities are 0.
    rng = np.random.default_rng(7)
    for _ in range(20):
        logits = (rng.normal(size=50_000) * 80.0).astype(np.float32)
        logits[rng.integers(0, 50_000, 5)] = logits.max() - rng.uniform(0, 3, 5).astype(np.float32)
        probs = sampler_module._softmax(logits, float(rng.uniform(0.3, 1.5)))
        assert (probs == 0.0).mean() > 0.5
        for t in (0.5, 0.95, 0.999, 1.0):
            for fast, ref in ((nucleus.top_p, ref_top_p), (nucleus.tfs, ref_tfs)):
                got = fast(probs, t)
                assert (list(range(len(probs))) if got is None else got.tolist()) == ref(probs, t)
            got = nucleus.typical(probs, t)
            assert (list(range(len(probs))) if got is None else got.tolist()) == ref_typical(
                probs, t
            )


def test_softmax_skipping_underflow_is_bit_identical() -> None:
    # float32 exp is exactly 0 below the skip bound, so skipped entries are what exp gives.
    z = -np.geomspace(110.0, 3e38, 20_000).astype(np.float32)
    assert not np.exp(z).any()
    rng = np.random.default_rng(5)
    for scale in (0.1, 1.0, 10.0, 32.0, 300.0):
        for temperature in (0.05, 0.6, 1.0, 4.0):
            logits = (rng.normal(size=10_000) * scale).astype(np.float32)
            got = sampler_module._softmax(logits, temperature)
            assert np.array_equal(got, ref_softmax(logits, temperature))
    logits = np.full(8192, -np.inf, dtype=np.float32)
    logits[[3, 4000]] = (1.0, 1.0)
    assert np.array_equal(sampler_module._softmax(logits, 0.6), ref_softmax(logits, 0.6))
