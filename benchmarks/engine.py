"""Engine benchmarks, as ratios measured within one run (this machine is noisy).

1. Our Python-stepped plain decoding vs MNN's own C++ generate() on the same target.
2. Measured speculative speedup vs the speedup predicted from the measured per-forward
   costs and acceptance (the gap is the loop's own overhead).
3. Speculative tok/s through the worker process vs the same Session in-process.

The mid-size synthetic pair (16-layer target whose extra layers are near-identity,
2-layer draft sharing its first layers) is generated once into benchmarks/.cache/pair
with the fixtures environment (torch); it is not committed.

    make bench-pair                      # once: builds .venv-fixtures and the pair
    .venv/bin/python benchmarks/engine.py [--runs 5] [--tokens 256] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.infra.typed_json import to_json  # noqa: E402
from app.core.measure.bench import RunPair, summarize  # noqa: E402
from app.engine.client.engine_client import EngineClient  # noqa: E402
from app.engine.protocol import Generate, Load, Mode, Reset, Rounds  # noqa: E402
from app.engine.worker.decoder import Decoder  # noqa: E402
from app.engine.worker.mnn_llm import MnnLlm  # noqa: E402
from app.engine.worker.server import claim_stdout  # noqa: E402
from app.engine.worker.session import Session  # noqa: E402

PAIR = ROOT / "benchmarks" / ".cache" / "pair"
PROMPT = "Explain, step by step, how a refrigerator keeps food cold, for a curious child."


def ensure_pair(fixtures_python: str, layers: int, hidden: int) -> None:
    command = [
        fixtures_python,
        str(ROOT / "tests" / "fixtures" / "make_bundles.py"),
        "--bench-pair",
        str(PAIR),
        "--target-layers",
        str(layers),
        "--hidden",
        str(hidden),
    ]
    if not Path(fixtures_python).exists():
        sys.exit(f"no fixtures environment at {fixtures_python}: run `make bench-pair` first")
    subprocess.run(command, check=True)


def interleaved(runs: int, first: Callable[[], float], second: Callable[[], float]) -> list[float]:
    """second/first ratio per pair; the order alternates so neither always goes first."""
    ratios = []
    for i in range(runs):
        if i % 2 == 0:
            a, b = first(), second()
        else:
            b, a = second(), first()
        ratios.append(b / a)
    return ratios


def bench_python_vs_cpp(
    pair: Path, recipe: dict[str, Any], tokens: int, runs: int
) -> dict[str, Any]:
    target = MnnLlm(pair / "target", {**recipe, "sampler_type": "greedy"})
    prompt = target.encode(target.chat_prompt([{"role": "user", "content": PROMPT}]))
    decoder = Decoder(target, None, 0, [])
    rates: dict[str, list[float]] = {"python": [], "cpp": []}

    def ours() -> float:
        target.reset()
        rate = decoder.generate(prompt, tokens).stats.tok_s
        assert rate is not None
        rates["python"].append(rate)
        return rate

    def timed_generate(count: int) -> tuple[int, float]:
        target.reset()
        started = time.perf_counter()
        out = target._c.generate(prompt, count)
        elapsed = time.perf_counter() - started
        target.reset()
        return len(out), elapsed

    def mnn() -> float:
        # Same definition as ours: tokens after the prefill's own / decode time. The
        # decode time is a full generate() less a one-token one (prompt and prefill
        # alike): get_context()'s own timer is not read, because reading the context
        # segfaults when the output ends inside a UTF-8 sequence (real tokenizers).
        produced, full = timed_generate(tokens)
        _, prefill = timed_generate(1)
        rate = (produced - 1) / (full - prefill)
        rates["cpp"].append(rate)
        return rate

    ours(), mnn()  # warm-up
    rates = {"python": [], "cpp": []}
    ratios = interleaved(runs, mnn, ours)
    return {
        "python_tok_s": statistics.median(rates["python"]),
        "cpp_tok_s": statistics.median(rates["cpp"]),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
    }


def _session(pair: Path, recipe: dict[str, Any], d: int, draft: str = "draft") -> Session:
    session = Session()
    session.load(str(pair / "target"), str(pair / draft), dict(recipe), dict(recipe), d)
    return session


def _generate(session: Session, mode: Mode, tokens: int) -> Any:
    session.reset()
    request = Generate(prompt=PROMPT, max_tokens=tokens, mode=mode, ignore_stop=True)
    return session.generate(request, lambda event: None, lambda: False)


def bench_prediction(
    pair: Path, recipe: dict[str, Any], d: int, tokens: int, runs: int, draft: str = "draft"
) -> dict[str, Any]:
    session = _session(pair, recipe, d, draft)
    _generate(session, Mode.PLAIN, tokens), _generate(session, Mode.SPECULATIVE, tokens)
    pairs = []
    for i in range(runs):
        order = (Mode.PLAIN, Mode.SPECULATIVE) if i % 2 == 0 else (Mode.SPECULATIVE, Mode.PLAIN)
        done = {mode: _generate(session, mode, tokens) for mode in order}
        pairs.append(
            RunPair(
                done[Mode.PLAIN].stats,
                done[Mode.SPECULATIVE].stats,
                done[Mode.PLAIN].tokens == done[Mode.SPECULATIVE].tokens,
            )
        )
    session.unload()
    figures: dict[str, Any] = to_json(summarize(pairs))
    return figures


class _Observer:
    """Tok/s as a caller sees it: tokens that arrive after the first batch, over the time
    from that batch to the end. The same definition on both sides of the comparison, and
    on the worker side it includes the pipe and the JSON."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.after_first = 0

    def on_event(self, event: Rounds) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        else:
            self.after_first += len(event.tokens)

    def rate(self) -> float:
        assert self.first is not None
        return self.after_first / (time.perf_counter() - self.first)


def bench_worker(
    pair: Path, recipe: dict[str, Any], d: int, tokens: int, runs: int
) -> dict[str, Any]:
    session = _session(pair, recipe, d)
    client = EngineClient()
    client.run(
        Load(
            target=str(pair / "target"),
            draft=str(pair / "draft"),
            target_config=recipe,
            draft_config=recipe,
            draft_length=d,
        ),
        timeout=120,
    )
    request = Generate(prompt=PROMPT, max_tokens=tokens, mode=Mode.SPECULATIVE, ignore_stop=True)
    rates: dict[str, list[float]] = {"in_process": [], "worker": []}

    def in_process() -> float:
        session.reset()
        seen = _Observer()
        session.generate(request, seen.on_event, lambda: False)
        rates["in_process"].append(seen.rate())
        return rates["in_process"][-1]

    def worker() -> float:
        client.run(Reset())
        seen = _Observer()
        client.run(request, on_rounds=seen.on_event)
        rates["worker"].append(seen.rate())
        return rates["worker"][-1]

    in_process(), worker()  # warm-up
    rates = {"in_process": [], "worker": []}
    ratios = interleaved(runs, in_process, worker)
    client.close()
    session.unload()
    return {
        "in_process_tok_s": statistics.median(rates["in_process"]),
        "worker_tok_s": statistics.median(rates["worker"]),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("-d", type=int, default=4, help="draft length")
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument(
        "--fixtures-python", default=str(ROOT / ".venv-fixtures" / "bin" / "python")
    )
    parser.add_argument(
        "--only",
        choices=("cpp", "prediction", "worker"),
        action="append",
        help="run only these parts (repeatable)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (PAIR / "target" / "llm.mnn").is_file():
        ensure_pair(args.fixtures_python, args.layers, args.hidden)
    # MNN prints to C stdout in this process; keep stdout clean for the results.
    out = claim_stdout()
    recipe = {"memory": "normal", "precision": "low", "thread_num": args.threads}
    started = time.perf_counter()
    parts = set(args.only or ("cpp", "prediction", "worker"))
    result: dict[str, Any] = {"recipe": recipe, "tokens": args.tokens, "runs": args.runs}
    if "cpp" in parts:
        result["python_vs_cpp"] = bench_python_vs_cpp(PAIR, recipe, args.tokens, args.runs)
    if "prediction" in parts:
        result["prediction"] = bench_prediction(PAIR, recipe, args.d, args.tokens, args.runs)
    if "worker" in parts:
        result["worker_vs_in_process"] = bench_worker(PAIR, recipe, args.d, args.tokens, args.runs)
    result["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(result, indent=2), file=out)
        return 0
    if "python_vs_cpp" in result:
        cpp = result["python_vs_cpp"]
        print(
            f"1. Python-stepped plain vs MNN C++ generate(): {cpp['ratio']:.3f} "
            f"({cpp['python_tok_s']:.1f} vs {cpp['cpp_tok_s']:.1f} tok/s)   floor 0.97",
            file=out,
        )
    if "prediction" in result:
        pred = result["prediction"]
        print(
            f"2. measured / predicted speedup:              {pred['prediction_ratio']:.3f} "
            f"(measured {pred['uplift']:.3f}x, predicted {pred['predicted_speedup']:.3f}x, "
            f"acceptance {pred['acceptance']:.3f}, c {pred['cost_ratio']:.3f})   floor 0.95",
            file=out,
        )
        print(
            f"   speculative {pred['spec_tok_s']:.1f} tok/s vs plain "
            f"{pred['baseline_tok_s']:.1f} tok/s, mean accepted length "
            f"{pred['mean_accepted_length']:.2f}, lossless {pred['lossless']}",
            file=out,
        )
    if "worker_vs_in_process" in result:
        work = result["worker_vs_in_process"]
        print(
            f"3. worker / in-process speculative tok/s:     {work['ratio']:.3f} "
            f"({work['worker_tok_s']:.1f} vs {work['in_process_tok_s']:.1f} tok/s)   floor 0.98",
            file=out,
        )
    print(f"({result['seconds']:.0f} s)", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
