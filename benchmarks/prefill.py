"""Chunked prefill (progress and cancel between chunks) against MNN's own prefill of the
whole prompt in one forward, same model, same prompt, interleaved, medians.

The ratio is chunked tok/s over one-forward tok/s: the floor is 0.95. The fixture fast
target is small, so a chunk's fixed cost weighs more here than on a real model; the
real-scale pair (`make bench-real-pair`) is used too when it has been built.

    .venv/bin/python benchmarks/prefill.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.worker.decoder import Decoder  # noqa: E402
from app.engine.worker.mnn_llm import MnnLlm  # noqa: E402

MODELS = (
    ROOT / "tests" / "fixtures" / "bundles" / "fast-target",
    ROOT / "benchmarks" / ".cache" / "real" / "target",
)
TEXT = "The river runs through the old town, past the mill and under the stone bridge. "
PROMPT_TOKENS = 2000
RUNS = 5


def _one_forward(model: MnnLlm, ids: list[int]) -> float:
    model.reset()
    model.begin_prefill()
    start = time.perf_counter()
    model.forward(ids)
    return time.perf_counter() - start


def _chunked(model: MnnLlm, ids: list[int]) -> tuple[float, int]:
    model.reset()
    reports: list[int] = []
    start = time.perf_counter()
    Decoder(model, None, 0, [])._prefill(model, ids, lambda _m, done, _t: reports.append(done))
    return time.perf_counter() - start, len(reports)


def main() -> int:
    for folder in MODELS:
        if not (folder / "config.json").is_file():
            print(f"{folder}: not built, skipped")
            continue
        model = MnnLlm(folder, {"thread_num": 2})
        ids = model.encode(TEXT * (PROMPT_TOKENS // 10))[:PROMPT_TOKENS]
        one, chunked, chunks = [], [], 0
        for _ in range(RUNS):
            one.append(_one_forward(model, ids))
            seconds, chunks = _chunked(model, ids)
            chunked.append(seconds)
        model.close()
        one_s, chunked_s = statistics.median(one), statistics.median(chunked)
        print(
            f"{folder.name}: {len(ids)} tokens: one forward {len(ids) / one_s:,.0f} tok/s, "
            f"chunked {len(ids) / chunked_s:,.0f} tok/s ({chunks} progress reports), "
            f"ratio {one_s / chunked_s:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
