"""Sampling cost at real vocabulary (151,936), as a share of one target step.

The target is the Qwen3-0.6B-shaped bench pair's (benchmarks/.cache/real/target, built
by `make bench-real-pair`), loaded in-process; one step is a one-token forward in decode
mode (median over --steps). The logits are the target's own rows from those steps; the
draft's are the target's plus noise (sd 1), so p and q differ as a real draft's would.

Per position: the draft's draw (adjusted_probs + inverse CDF) plus the target's check
(adjusted_probs + acceptance test, with a residual draw when rejected). Per round:
d = 3 draws plus verify over d+1 rows. Floor: a position under 5 % of a target step.

    .venv/bin/python benchmarks/sampling_cost.py [--threads 2] [--steps 24] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.pack.bundle import read_bundle  # noqa: E402
from app.core.recipe.sampler_settings import SamplerSettings, sampler_settings  # noqa: E402
from app.engine.worker.mnn_llm import MnnLlm  # noqa: E402
from app.engine.worker.server import claim_stdout  # noqa: E402
from app.engine.worker.session import AGREEMENT_PROMPT  # noqa: E402
from app.engine.worker.speculative_sampling import SpeculativeSampler  # noqa: E402

TARGET = ROOT / "benchmarks" / ".cache" / "real" / "target"
D = 3
FLOOR = 0.05
CASES: dict[str, dict[str, object]] = {
    # Qwen3's thinking-mode advice in a recipe (MNN's default mixed list, min_p off).
    "qwen3 T0.6 top-k 20 top-p 0.95": {
        "temperature": 0.6,
        "top_k": 20,
        "top_p": 0.95,
        "min_p": 0.0,
    },
    "full softmax, no truncation (T0.6)": {"sampler_type": "temperature", "temperature": 0.6},
    "top-k 0, top-p 0.95 over the vocabulary": {
        "mixed_samplers": ["topP", "temperature"],
        "temperature": 0.6,
        "top_p": 0.95,
    },
    "top-k 0, tfs 0.95 over the vocabulary": {
        "mixed_samplers": ["tfs", "temperature"],
        "temperature": 0.6,
        "tfs_z": 0.95,
    },
    "top-k 0, typical 0.95 over the vocabulary": {
        "mixed_samplers": ["typical", "temperature"],
        "temperature": 0.6,
        "typical": 0.95,
    },
}

Rows = npt.NDArray[np.float32]


def target_rows(threads: int, steps: int) -> tuple[float, Rows]:
    """Median seconds of one decode step of the target, and its logits rows."""
    info = read_bundle(TARGET)
    target = MnnLlm(TARGET, {"memory": "low", "thread_num": threads}, info.vocab_size)
    prompt = target.encode(target.chat_prompt([{"role": "user", "content": AGREEMENT_PROMPT}]))
    target.begin_prefill()
    token = int(np.argmax(target.forward(prompt)[-1]))
    times, rows = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        row = target.forward([token])[-1]
        times.append(time.perf_counter() - t0)
        rows.append(row.astype(np.float32))
        token = int(np.argmax(row))
    target.close()
    return statistics.median(times), np.stack(rows)


def median_seconds(fn: Callable[[int], None], count: int) -> float:
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def sampling_costs(settings: SamplerSettings, p: Rows, q: Rows) -> tuple[float, float]:
    """Median seconds of one position and of one d = 3 round."""
    sampler = SpeculativeSampler(settings, 0)
    history = list(range(200))  # a chat-sized history (read only by penalties)
    n = len(p) - D

    def position(i: int) -> None:
        token, dist = sampler.draw(q[i], history)
        sampler.check(p[i], token, dist, history)

    def round_(i: int) -> None:
        proposal: list[int] = []
        qs = []
        for j in range(D):
            token, dist = sampler.draw(q[i + j], history + proposal)
            proposal.append(token)
            qs.append(dist)
        sampler.verify(p[i : i + D + 1], proposal, qs, history)

    position(0)  # warm up caches and lazy allocations
    return median_seconds(lambda i: position(i % len(p)), 3 * len(p)), median_seconds(
        lambda i: round_(i % n), 3 * n
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not TARGET.is_dir():
        sys.exit(f"no bench pair at {TARGET}: run `make bench-real-pair` first")
    out = claim_stdout()  # MNN prints to fd 1
    step, p = target_rows(args.threads, args.steps)
    q = (p + np.random.default_rng(0).normal(size=p.shape)).astype(np.float32)
    result: dict[str, object] = {"vocab": p.shape[1], "target_step_ms": step * 1e3}
    lines = [f"target step: {step * 1e3:.1f} ms (vocab {p.shape[1]}, {args.threads} threads)"]
    for name, recipe in CASES.items():
        one, rnd = sampling_costs(sampler_settings(recipe), p, q)
        ok = "ok" if one / step < FLOOR else "OVER"
        lines.append(
            f"{name}: {one * 1e3:.2f} ms a position = {one / step:.1%} of a target step "
            f"(floor < 5 %: {ok}); a d={D} round {rnd * 1e3:.2f} ms = {rnd / step:.1%}"
        )
        result[name] = {"position_ms": one * 1e3, "round_ms": rnd * 1e3, "share": one / step}
    out.write((json.dumps(result) if args.json else "\n".join(lines)) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
