"""Verify agreement: measured with the target alone, true to what the decoder does."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.infra.errors import EngineError
from app.core.measure import verify_agreement
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import VerifyMethod
from app.core.recipe.drafting_settings import FIXED_DRAFTING
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Done, Generate, Load, MeasureAgreement, Mode, Reset
from app.engine.worker import agreement
from app.engine.worker.session import AGREEMENT_PROMPT, Session
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
LOW = {"memory": "low", "thread_num": 1}
NORMAL = {"memory": "normal", "thread_num": 1}
D = 3


def _load(session: Session, fixture_bundle: Fixture, recipe: dict[str, object]) -> None:
    session.load(
        str(fixture_bundle("qwen3-target")),
        str(fixture_bundle("qwen3-draft-identical")),
        dict(recipe),
        dict(recipe),
        D,
    )


def test_exact_recipe_agrees_everywhere(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, NORMAL)
    found = session.verify_agreement(rows=64)
    assert found.matched == found.checked == 64 and found.exact is True
    assert found.agreement == 1.0 and found.verify == "batched"


def test_disagreement_is_where_an_identical_draft_first_loses(
    session: Session, fixture_bundle: Fixture
) -> None:
    """Ground truth from the decoder itself: an identical draft proposes exactly the
    target's one-token steps, so speculative output follows plain output up to the first
    row the verify gets wrong, and differs right there."""
    _load(session, fixture_bundle, LOW)
    target = session.target
    assert target is not None
    prompt = target.encode(target.chat_prompt([{"role": "user", "content": AGREEMENT_PROMPT}]))
    flags = agreement.measure(target, prompt, D, 128)
    assert len(flags) == agreement.checked_rows(D, 128) == 128
    # memory "low" on this fixture: measured 120/128 (see tests/fixtures/README.md).
    assert not all(flags), "memory low should make the batched verify disagree somewhere"
    first_bad = flags.index(False)

    def run(mode: Mode) -> list[int]:
        session.reset()
        result = session.generate(
            Generate(
                prompt_ids=tuple(prompt),
                max_tokens=first_bad + 2,
                mode=mode,
                ignore_stop=True,
                drafting=FIXED_DRAFTING,  # every round verifies D + 1 rows, as measured
            ),
            lambda _event: None,
            lambda: False,
        )
        return result.tokens

    plain, spec = run(Mode.PLAIN), run(Mode.SPECULATIVE)
    # Token 0 comes from the prefill; verify row i decides token i + 1.
    assert spec[: first_bad + 1] == plain[: first_bad + 1]
    assert spec[first_bad + 1] != plain[first_bad + 1]


def test_cached_per_target_and_recipe(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, LOW)
    first = session.verify_agreement(rows=32)
    assert first.cached is False and first.checked == 32
    again = session.verify_agreement(rows=32)
    assert again == dataclasses.replace(first, cached=True)
    # Another recipe is another figure.
    _load(session, fixture_bundle, NORMAL)
    assert session.verify_agreement(rows=32).cached is False


def test_stepwise_verify_is_exact_by_construction(
    session: Session, fixture_bundle: Callable[[str], Path]
) -> None:
    # A Qwen3.5 (mrope) target is verified one token at a time: nothing to measure.
    draft = str(fixture_bundle("qwen35-draft"))
    session.load(draft, draft, dict(LOW), dict(LOW), D)
    found = session.verify_agreement(rows=16)
    assert found.verify == "stepwise" and found.exact is True


def test_damaged_cache_is_measured_again(session: Session, fixture_bundle: Fixture) -> None:
    _load(session, fixture_bundle, NORMAL)
    session.verify_agreement(rows=16)
    cache = verify_agreement._cache_file()
    cache.write_text("{ not json")
    assert session.verify_agreement(rows=16).cached is False
    assert json.loads(cache.read_text())["version"] == verify_agreement.CACHE_VERSION


def test_what_the_user_is_told() -> None:
    exact = VerifyAgreement(1.0, 64, 64, 3, VerifyMethod.BATCHED)
    assert exact.sentence(0.4) == (
        "Verify agreement 1.00 (64/64 tokens): the batched verify matches single steps; "
        "acceptance is the draft's."
    )
    low = VerifyAgreement(56 / 64, 56, 64, 3, VerifyMethod.BATCHED)
    # An identical draft at d=3: (0.875 + 0.875^2 + 0.875^3) / 3, by hand 0.7702.
    assert low.ceiling == pytest.approx(0.770182, abs=1e-6)
    # 0.70 >= 0.9 * 0.770: the draft is about as good as the verify allows.
    assert low.limited(0.70) and not low.limited(0.68) and not exact.limited(1.0)
    assert low.sentence(0.70).endswith(
        "Acceptance 0.70 is near that estimate: it is limited by the recipe, not the draft."
    )
    # The ceiling is an estimate from 64 probe tokens: said with its range (the Wilson
    # interval of 56/64 is 0.7683-0.9380, by hand; its ceilings 0.6097-0.8761).
    assert low.ceiling_range == pytest.approx((0.6097, 0.8761), abs=1e-4)
    assert (
        "an estimated 0.77 at d=3 (95 % range 0.61\N{EN DASH}0.88, from 64 tokens of a probe text)"
    ) in low.sentence(0.3)
    assert "limited by the recipe" not in low.sentence(0.3)
    # Measured above the estimate's range: never a ceiling below what was measured.
    above = low.sentence(0.94)
    assert "Acceptance 0.94 is above that range" in above
    assert "limited by" not in above and "only about" not in above
    summary = low.summary_keys(0.75)
    assert summary["acceptance_limited_by_verify"] is True
    assert summary["verify_agreement"] == low.to_json()
    assert low.to_json()["exact"] is False


def test_worker_and_bench_report_it(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-identical")
    client.run(Load(target=str(target), draft=str(draft), target_config=LOW, draft_length=D))
    found = client.run(MeasureAgreement(rows=32)).result
    assert found.checked == 32
    assert 0.0 < found.agreement < 1.0


@pytest.mark.slow
def test_cli_bench_shows_agreement(bundle_copy: Copy, tmp_path: Path) -> None:
    recipe = tmp_path / "low.json"
    recipe.write_text(json.dumps(LOW))
    common = ["--target", str(bundle_copy("qwen3-target")), "--draft"]
    draft = str(bundle_copy("qwen3-draft-identical"))
    args = [*common, draft, "--recipe", str(recipe), "--draft-recipe", str(recipe)]
    args += ["--tokens", "40", "--runs", "1", "--min-run-seconds", "0"]
    out = json.loads(run_cli("bench", *args, "--json", check=True).stdout)
    found = out["verify_agreement"]
    assert found["checked"] == agreement.checked_rows(out["draft_length"], agreement.DEFAULT_ROWS)
    assert out["verify_note"] == VerifyAgreement.from_json(found).sentence(out["acceptance"])
    text = run_cli("bench", *args, check=True).stdout
    assert re.search(rf"^Verify agreement +{found['agreement']:.3f}$", text, re.MULTILINE)
    # The same deterministic pair (one thread): the same acceptance, so the same note.
    assert out["verify_note"] in text


def test_a_cancelled_check_leaves_the_pair_usable(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-identical")
    client.run(Load(target=str(target), draft=str(draft), target_config=LOW, draft_length=D))
    request: dict[str, Any] = {"prompt": "Hi", "max_tokens": 12, "mode": "plain"}
    plain = client.run(Generate(**request)).tokens
    client.run(Reset())  # memory low: a reused cache may steer the reply (see README)
    # Queued behind a reply, the check is cancelled before its first forward.
    reply = client.send(Generate(**request))
    check = client.send(MeasureAgreement())
    client.cancel(check)
    done = client.wait(reply)
    assert isinstance(done, Done) and done.tokens == plain
    with pytest.raises(EngineError) as caught:
        client.wait(check)
    assert caught.value.code == "cancelled"
    client.run(Reset())
    assert client.run(Generate(**request)).tokens == plain
    assert client.run(MeasureAgreement(rows=16)).result.cached is False  # nothing half-stored
