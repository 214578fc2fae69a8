"""Figures at real scale: a Qwen3-0.6B-shaped pair with the real Qwen tokenizer
(vocabulary 151,936), random but deterministic weights, built by `make bench-real-pair`
into benchmarks/.cache/real ({target, draft, draft-identical}; not committed).

1. Python-stepped plain decoding vs MNN's C++ generate() (ratio, same run).
2. Measured vs predicted speculative speedup with the small draft.
3. Load time and RSS of the pair through the engine worker vs MNN alone (each loaded
   in a fresh process, the figures read by psutil), under memory low and normal.
4. Verify agreement (app/core/measure/verify_agreement.py) and plain decode speed for MNN's
   knobs that touch activation quantization: memory, dynamic_option, attention_mode,
   precision; identical-draft acceptance under the packs' default recipe (memory low)
   and under the best-agreeing low-memory candidate ("tuned").

Random weights make logits flatter than a trained model's, so near-ties, and with them
disagreements, are likelier here: agreement on a real pack is at least as good.

    make bench-real-pair          # once, several minutes
    .venv/bin/python benchmarks/real_scale.py [--threads 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.pack.bundle import read_bundle  # noqa: E402
from app.engine.worker import agreement  # noqa: E402
from app.engine.worker.decoder import Decoder  # noqa: E402
from app.engine.worker.mnn_llm import MnnLlm  # noqa: E402
from app.engine.worker.server import claim_stdout  # noqa: E402
from app.engine.worker.session import AGREEMENT_PROMPT  # noqa: E402
from benchmarks.engine import bench_prediction, bench_python_vs_cpp  # noqa: E402

PAIR = ROOT / "benchmarks" / ".cache" / "real"
D = 3
# MNN's knobs that change how activations are quantized or attention is computed.
KNOBS: list[dict[str, Any]] = [
    {"memory": "low"},
    {"memory": "low", "dynamic_option": 1},
    {"memory": "low", "dynamic_option": 2},
    {"memory": "low", "attention_mode": 0},
    {"memory": "low", "dynamic_option": 2, "attention_mode": 0},
    {"memory": "low", "precision": "high"},
    {"memory": "normal"},
]

_LOAD_SCRIPT = """
import json, os, sys, time
import psutil
sys.path.insert(0, {root!r})
from pathlib import Path
kind, target, draft, recipe = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
proc = psutil.Process()
before = proc.memory_info().rss
started = time.perf_counter()
if kind == "mnn":
    import MNN.llm
    from app.engine.worker.mnn_llm import runtime_config
    held = []
    for path in (target, draft):
        llm = MNN.llm.create(str(Path(path) / "config.json"))
        llm.set_config(runtime_config(Path(path), recipe))
        assert llm._c_obj.load()
        held.append(llm)
    rss = proc.memory_info().rss
else:
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import Load
    client = EngineClient()
    client.start()
    worker = psutil.Process(client.pid)
    base = worker.memory_info().rss
    load = Load(target, draft, target_config=recipe, draft_config=recipe, draft_length=3)
    client.run(load, timeout=600)
    rss = worker.memory_info().rss
    before = 0
    client.close()
print(json.dumps({{"seconds": time.perf_counter() - started, "rss": rss, "before": before}}))
"""


def load_figures(recipe: dict[str, Any]) -> dict[str, Any]:
    """Load time and RSS of the pair: MNN alone vs our worker, each in a new process."""
    out: dict[str, Any] = {}
    for kind in ("mnn", "worker"):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _LOAD_SCRIPT.format(root=str(ROOT)),
                kind,
                str(PAIR / "target"),
                str(PAIR / "draft"),
                json.dumps(recipe),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        out[kind] = json.loads(done.stdout.strip().splitlines()[-1])
    out["rss_ratio"] = out["worker"]["rss"] / out["mnn"]["rss"]
    out["extra_mb"] = (out["worker"]["rss"] - out["mnn"]["rss"]) / 2**20
    return out


def knob_figures(recipe: dict[str, Any], tokens: int, rows: int) -> dict[str, Any]:
    """Verify agreement and plain decode speed of the target under one recipe."""
    info = read_bundle(PAIR / "target")
    target = MnnLlm(PAIR / "target", recipe, info.vocab_size, verify_length=D + 1)
    prompt = target.encode(target.chat_prompt([{"role": "user", "content": AGREEMENT_PROMPT}]))
    agree = agreement.measure(target, prompt, D, rows)
    decoder = Decoder(target, None, 0, [])
    rates = []
    for _ in range(2):
        target.reset()
        rate = decoder.generate(prompt, tokens).stats.tok_s
        assert rate is not None
        rates.append(rate)
    return {
        "recipe": recipe,
        "agreement": sum(agree) / len(agree),
        "checked": len(agree),
        "plain_tok_s": max(rates),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=128, help="verify rows per agreement")
    parser.add_argument(
        "--tuned",
        default='{"memory": "low", "dynamic_option": 2, "attention_mode": 0}',
        help="JSON recipe keys of the low-memory candidate to compare",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (PAIR / "target" / "llm.mnn").is_file():
        sys.exit(f"no pair at {PAIR}: run `make bench-real-pair` first")
    out = claim_stdout()
    threads = {"thread_num": args.threads}
    default = {"memory": "low", **threads}
    tuned = {**json.loads(args.tuned), **threads}
    started = time.perf_counter()
    result: dict[str, Any] = {"threads": args.threads, "tokens": args.tokens, "d": D}
    result["python_vs_cpp"] = bench_python_vs_cpp(PAIR, default, args.tokens, args.runs)
    result["prediction"] = {
        name: bench_prediction(PAIR, recipe, D, args.tokens, args.runs)
        for name, recipe in (("default", default), ("tuned", tuned))
    }
    result["identical_draft"] = {
        name: bench_prediction(PAIR, recipe, D, args.tokens, 1, draft="draft-identical")
        for name, recipe in (("default", default), ("tuned", tuned))
    }
    result["load"] = {
        "low": load_figures(default),
        "normal": load_figures({**default, "memory": "normal"}),
    }
    result["knobs"] = [knob_figures({**k, **threads}, args.tokens, args.rows) for k in KNOBS]
    result["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(result, indent=2), file=out)
        return 0
    cpp = result["python_vs_cpp"]
    print(
        f"1. Python-stepped plain vs C++ generate(): {cpp['ratio']:.3f} "
        f"({cpp['python_tok_s']:.1f} vs {cpp['cpp_tok_s']:.1f} tok/s)",
        file=out,
    )
    for name, pred in result["prediction"].items():
        print(
            f"2. {name:<11} measured / predicted speedup {pred['prediction_ratio']:.3f} "
            f"(measured {pred['uplift']:.2f}x, predicted {pred['predicted_speedup']:.2f}x, "
            f"acceptance {pred['acceptance']:.3f}, c {pred['cost_ratio']:.3f})",
            file=out,
        )
    for memory, load in result["load"].items():
        print(
            f"3. memory {memory:<6}: load {load['worker']['seconds']:.1f} s (MNN alone "
            f"{load['mnn']['seconds']:.1f} s); RSS {load['worker']['rss'] / 2**20:.0f} MB vs "
            f"MNN alone {load['mnn']['rss'] / 2**20:.0f} MB (+{load['extra_mb']:.0f} MB)",
            file=out,
        )
    for name, ident in result["identical_draft"].items():
        print(f"4. identical-draft acceptance, {name}: {ident['acceptance']:.3f}", file=out)
    base = result["knobs"][0]["plain_tok_s"]
    for knob in result["knobs"]:
        keys = {k: v for k, v in knob["recipe"].items() if k != "thread_num"}
        print(
            f"   {json.dumps(keys):<62} agreement {knob['agreement']:.3f} "
            f"({knob['checked']} rows)  plain {knob['plain_tok_s']:.1f} tok/s "
            f"({knob['plain_tok_s'] / base:.2f}x)",
            file=out,
        )
    print(f"({result['seconds']:.0f} s)", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
