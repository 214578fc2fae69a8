"""Qwen3.5 (linear attention, mrope) targets on real MNN 3.6.1, with the fixture bundles.

The target is a copy of `qwen35-draft` (an identical pair). What is checked: the
load-time rollback probe says no on this MNN (and yes on a full-attention model, so it
can say yes), the pair then verifies step by step and gives plain decoding's output,
mrope verify rows are right when the verify module has another length, and bench and
tune refuse such a pair unless forced, then mark what they measured. No speed is
asserted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.infra.errors import SpeculationCannotPay
from app.core.measure.tune_plan import SweepPlan
from app.core.pack.bundle import read_bundle
from app.core.pack.verdict import LINEAR_CANNOT_PAY
from app.engine.client.bench import BenchPlan, run_bench
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_runner import run_sweep
from app.engine.protocol import Generate, Mode
from app.engine.worker.decoder import Decoder
from app.engine.worker.mnn_llm import MnnLlm
from app.engine.worker.rollback_probe import probe_linear_rollback
from app.engine.worker.session import Session
from tests.helpers.cli import run_cli

Fixture = Callable[[str], Path]
Copy = Callable[..., Path]
NORMAL = {"memory": "normal", "thread_num": 1}
LOW = {"memory": "low", "thread_num": 1}
PROMPT = "Tell me a short story about a lighthouse keeper and a storm."


@pytest.fixture
def qwen35_pair(bundle_copy: Copy, tmp_path: Path) -> tuple[Path, Path]:
    """A Qwen3.5 target (a copy of the draft, without its draft recipe) and the draft,
    both with the lossless one-thread desktop recipe."""
    target = bundle_copy("qwen35-draft", tmp_path / "qwen35-target")
    (target / "config_cpu.json").unlink()
    config = json.loads((target / "config.json").read_text())
    (target / "config.json").write_text(json.dumps({**config, **NORMAL}, indent=4))
    draft = bundle_copy("qwen35-draft", tmp_path / "qwen35-draft", desktop=True)
    return target, draft


def _model(path: Path, recipe: dict[str, object], verify_length: int) -> MnnLlm:
    return MnnLlm(path, dict(recipe), read_bundle(path).vocab_size, verify_length)


# -- the probe -----------------------------------------------------------------------------


@pytest.mark.parametrize("recipe", [NORMAL, LOW], ids=["memory-normal", "memory-low"])
@pytest.mark.parametrize("d", [1, 3])
def test_probe_finds_no_rollback_on_this_mnn(
    qwen35_pair: tuple[Path, Path], recipe: dict[str, object], d: int
) -> None:
    target = _model(qwen35_pair[0], recipe, d + 2)
    result = probe_linear_rollback(target, d)
    assert result.exact is False
    # Not a rounding matter: every check misses, the repeated step by far.
    assert min(result.errors[:2]) > 2 * result.allowed
    assert result.errors[2] > 100 * result.tolerance
    assert target.kv_tokens == []  # the probe leaves the cache empty


@pytest.mark.parametrize("recipe", [NORMAL, LOW], ids=["memory-normal", "memory-low"])
def test_probe_says_yes_where_erase_is_exact(
    fixture_bundle: Fixture, recipe: dict[str, object]
) -> None:
    """A KV cache (full attention) rolls back exactly, even when memory "low" makes a
    verify drift from one-token steps: the probe must be able to say yes."""
    target = _model(fixture_bundle("qwen3-target"), recipe, 4)
    result = probe_linear_rollback(target, 3)
    assert result.exact is True
    assert result.errors[2] == 0.0


def test_load_reports_the_probe_and_decodes_exactly(
    session: Session, qwen35_pair: tuple[Path, Path]
) -> None:
    target, draft = qwen35_pair
    info = session.load(str(target), str(draft), dict(NORMAL), dict(NORMAL), 3)
    assert info.linear_attention is True
    assert info.linear_rollback is False
    assert info.cannot_pay == LINEAR_CANNOT_PAY
    assert info.verify == "stepwise" and info.lossless_expected is True

    def run(mode: Mode) -> list[int]:
        session.reset()
        result = session.generate(
            Generate(prompt=PROMPT, max_tokens=40, mode=mode, ignore_stop=True),
            lambda e: None,
            lambda: False,
        )
        if mode == Mode.SPECULATIVE:
            assert result.stats.acceptance == 1.0
            # Step by step: the target pays one step per accepted token, plus one a round.
            assert result.stats.target_forwards == result.stats.accepted + result.stats.rounds
        return result.tokens

    assert run(Mode.SPECULATIVE) == run(Mode.PLAIN)


def test_full_attention_pairs_are_not_probed(session: Session, fixture_bundle: Fixture) -> None:
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen3-draft-noisy")
    info = session.load(str(target), str(draft), dict(NORMAL), dict(NORMAL), 3)
    assert info.linear_rollback is None and info.cannot_pay is None
    assert info.verify == "batched"
    alone = session.load(str(fixture_bundle("qwen35-draft")), None, dict(NORMAL))
    assert alone.linear_rollback is None and alone.cannot_pay is None


# -- mrope verify positions ------------------------------------------------------------------


def _verify_gap(path: Path, d: int, verify_length: int) -> float:
    """Max |difference| between a (d+1)-row verify and the same tokens stepped one by one."""
    model = _model(path, NORMAL, verify_length)
    ids = model.encode(PROMPT)
    prefix, fed = ids[:6], ids[6 : 6 + d + 1]

    def start() -> None:
        model.reset()
        model.begin_prefill()
        model.forward(prefix)

    start()
    steps = np.stack([model.forward([t])[-1].copy() for t in fed])
    start()
    rows = model.forward(fed).copy()
    return float(np.max(np.abs(rows - steps)))


def test_mrope_verify_rows_are_right_with_another_module_length(
    qwen35_pair: tuple[Path, Path],
) -> None:
    """MNN 3.6.1 fills one of three mrope position rows only for the verify length its
    module was made for; the session loads mrope targets with d+2, and then a d+1 verify
    matches one-token steps (memory normal: up to float rounding)."""
    target = qwen35_pair[0]
    assert _verify_gap(target, 3, verify_length=5) < 1e-3
    assert _verify_gap(target, 3, verify_length=4) > 10 * _verify_gap(target, 3, 5)


def test_batched_verify_of_a_qwen35_target_matches_plain(
    session: Session, qwen35_pair: tuple[Path, Path]
) -> None:
    """The path a probe that says yes would enable: d+1 rows in one forward. Here the
    caches are still rebuilt after rejections (this MNN cannot roll them back)."""
    target, draft = qwen35_pair
    session.load(str(target), str(draft), dict(NORMAL), dict(NORMAL), 2)
    session.reset()
    ids, _ = session.prompt_ids(Generate(prompt=PROMPT))
    assert session.target is not None and session.draft is not None
    plain = Decoder(session.target, None, 0, [], target_linear=True).generate(ids, 40)
    session.reset()
    batched = Decoder(
        session.target, session.draft, 2, [], target_linear=True, draft_linear=True
    ).generate(ids, 40)
    assert batched.tokens == plain.tokens
    assert batched.stats.acceptance == 1.0
    assert batched.stats.target_forwards == batched.stats.rounds  # one verify a round


# -- bench and tune ----------------------------------------------------------------------------


@pytest.fixture
def worker() -> Iterator[EngineClient]:
    with EngineClient() as engine:
        yield engine


def test_bench_refuses_unless_forced_then_marks(
    worker: EngineClient, qwen35_pair: tuple[Path, Path]
) -> None:
    target, draft = qwen35_pair
    plan = BenchPlan(str(target), str(draft), draft_length=2, tokens=16, runs=1, warmup=False)
    with pytest.raises(SpeculationCannotPay) as refused:
        run_bench(worker, plan)
    assert LINEAR_CANNOT_PAY in refused.value.message
    assert refused.value.code == "cannot_pay"
    result = run_bench(worker, plan, force=True).to_json()
    assert result["cannot_pay"] == LINEAR_CANNOT_PAY
    assert result["linear_rollback"] is False
    assert result["lossless"] is True and result["acceptance"] == 1.0


def test_sweep_refuses_unless_forced_then_marks(
    worker: EngineClient, qwen35_pair: tuple[Path, Path]
) -> None:
    target, draft = qwen35_pair
    # Refusal and marking are the subject here, not the statistics: one short round each.
    plan = SweepPlan(
        draft_lengths=(1, 2),
        prompts=("Tell me about rivers.",),
        tokens=16,
        min_run_seconds=0.0,
        budget_seconds=0.0,
    )
    with pytest.raises(SpeculationCannotPay):
        run_sweep(worker, target, draft, plan)
    run = run_sweep(worker, target, draft, plan, force=True)
    assert run.cannot_pay == LINEAR_CANNOT_PAY
    assert len(run.results) == 2
    assert all(r.summary["cannot_pay"] == LINEAR_CANNOT_PAY for r in run.results)
    data = run.to_json()
    assert data["pays_off"] is False and data["cannot_pay"] == LINEAR_CANNOT_PAY
    assert data["verdict"].startswith("Speculation cannot pay on this MNN: linear-attention state.")


def test_cli_bench_and_tune_say_why(qwen35_pair: tuple[Path, Path], tmp_path: Path) -> None:
    target, draft = qwen35_pair
    pair = ("--target", str(target), "--draft", str(draft))
    bench = ("bench", *pair, "-d", "2", "--tokens", "16", "--runs", "1", "--min-run-seconds", "0")
    refused = run_cli(*bench)
    assert refused.returncode == 1
    assert LINEAR_CANNOT_PAY in refused.stderr and "--force" in refused.stderr
    forced = run_cli(*bench, "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"Note: {LINEAR_CANNOT_PAY} (linear_rollback false)" in forced.stdout
    assert "not a speedup" in forced.stdout
    as_json = json.loads(run_cli(*bench, "--force", "--json", check=True).stdout)
    assert as_json["cannot_pay"] == LINEAR_CANNOT_PAY and as_json["linear_rollback"] is False

    assert run_cli("tune", *pair, "--tokens", "16").returncode == 1
    before = (target / "config.json").read_text(), (draft / "config_cpu.json").read_text()
    save = tmp_path / "run.json"
    tune = run_cli(
        "tune",
        *pair,
        "--tokens",
        "16",
        "--budget",
        "0",
        "--min-run-seconds",
        "0",
        "--force",
        "--apply",
        "--json",
        "--save",
        str(save),
    )
    assert tune.returncode == 0, tune.stderr
    out = json.loads(tune.stdout)
    assert out["cannot_pay"] == LINEAR_CANNOT_PAY and out["pays_off"] is False
    assert out["not_applied"] == LINEAR_CANNOT_PAY and "applied" not in out
    assert ((target / "config.json").read_text(), (draft / "config_cpu.json").read_text()) == before
    assert json.loads(save.read_text())["cannot_pay"] == LINEAR_CANNOT_PAY
