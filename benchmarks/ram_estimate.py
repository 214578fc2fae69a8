"""The RAM estimate (app/core/measure/ram_estimate.py) against the engine worker's real memory.

For each pair found (the 16-layer hidden-512 bench pair from `make bench-pair`, and the
Qwen3-0.6B-shaped real-tokenizer pair in benchmarks/.cache/real when it exists), under
memory low and normal, with a short and a long conversation: a fresh worker's RSS when
ready, then after loading the pair and generating, read by psutil. The estimate is
computed for the same token counts. Floor: within 25 % (ratio 0.75 to 1.25).

    .venv/bin/python benchmarks/ram_estimate.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.infra.units import format_bytes  # noqa: E402
from app.core.pack.bundle import read_bundle  # noqa: E402
from tests.helpers.worker_rss import measure_pair  # noqa: E402

PAIRS = {
    "bench pair (16 layers, hidden 512)": ROOT / "benchmarks" / ".cache" / "pair",
    "real-scale pair (Qwen3-0.6B shape)": ROOT / "benchmarks" / ".cache" / "real",
}
# (prompt tokens, generated tokens)
CONVERSATIONS = {"short": (24, 32), "long": (500, 1000)}
FLOOR = (0.75, 1.25)


def measure(target: Path, draft: Path, memory: str, prompt: int, new: int) -> dict[str, Any]:
    vocab = read_bundle(target).vocab_size or 1000
    ids = [(i * 37) % min(vocab, 1000) for i in range(prompt)]
    found = measure_pair(target, draft, {"memory": memory, "thread_num": 1}, ids, new)
    return {
        "memory": memory,
        "tokens": found.tokens,
        "measured": found.measured,
        "estimate": found.estimate.engine,
        "ratio": found.estimate.engine / found.measured,
        "worker_ready": found.ready,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {}
    for label, folder in PAIRS.items():
        if not (folder / "target" / "llm.mnn").is_file():
            print(f"{label}: not built ({folder}), skipped", file=sys.stderr)
            continue
        rows = results.setdefault(label, [])
        for memory in ("low", "normal"):
            for name, (prompt, new) in CONVERSATIONS.items():
                row = measure(folder / "target", folder / "draft", memory, prompt, new)
                row["conversation"] = name
                rows.append(row)
                if not args.json:
                    print(
                        f"{label}, memory {memory}, {row['tokens']} tokens: estimate "
                        f"{format_bytes(row['estimate'])} vs measured "
                        f"{format_bytes(row['measured'])} (ratio {row['ratio']:.2f}; "
                        f"worker when ready {format_bytes(row['worker_ready'])})"
                    )
    if args.json:
        print(json.dumps(results, indent=2))
    ratios = [row["ratio"] for rows in results.values() for row in rows]
    ok = all(FLOOR[0] <= r <= FLOOR[1] for r in ratios)
    if not args.json:
        print(f"all within {FLOOR[0]:.2f}-{FLOOR[1]:.2f}: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
