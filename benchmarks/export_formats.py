"""Reading and pairing packs of every export era costs what reading today's does.

Times `read_bundle` on each committed era bundle against the llmexport 0.0.5 bundle of
the same weights (interleaved, medians: a ratio near 1 means an older format costs
nothing extra), and the one-off cost of comparing two tokenizer files of different
formats at the real Qwen3 vocabulary (vocabulary.py), against reading that bundle.

    .venv/bin/python benchmarks/export_formats.py
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.pack import vocabulary  # noqa: E402
from app.core.pack.bundle import read_bundle  # noqa: E402
from app.core.pack.tokenizer_info import TokenizerInfo  # noqa: E402

BUNDLES = ROOT / "tests" / "fixtures" / "bundles"
REFERENCE = "qwen3-target"  # llmexport 0.0.5
ERAS = ("era-3.1.4", "era-3.3.0", "era-3.4.1", "era-3.6.1")
REAL = ("era-3.1.4-realtok", "qwen3-realtok")  # tokenizer.txt vs tokenizer.mtok, 151,936


def _median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    results: dict[str, list[float]] = {name: [] for name in (REFERENCE, *ERAS)}
    for _ in range(5):  # interleaved, so the machine's noise is shared
        for name in results:
            folder = BUNDLES / name
            results[name].append(_median_ms(partial(read_bundle, folder), 100))
    reference = statistics.median(results[REFERENCE])
    print(f"read_bundle, {REFERENCE} (llmexport 0.0.5): {reference:.3f} ms")
    for name in ERAS:
        ms = statistics.median(results[name])
        print(f"read_bundle, {name}: {ms:.3f} ms, ratio {ms / reference:.2f}")
    infos = [read_bundle(BUNDLES / name) for name in REAL]
    read_ms = _median_ms(lambda: read_bundle(BUNDLES / REAL[0]), 20)
    digest_ms = []
    for info in infos:
        path = info.path / info.tokenizer.file

        def fresh(path: Path = path, tok: TokenizerInfo = info.tokenizer) -> None:
            vocabulary._DIGESTS.clear()  # the first comparison of a file, every time
            vocabulary.vocabulary_digest(path, tok)

        digest_ms.append(_median_ms(fresh, 5))
    for info, ms in zip(infos, digest_ms, strict=True):
        print(
            f"vocabulary digest, {info.tokenizer.file} at 151,936: {ms:.0f} ms once per file "
            f"(x{ms / read_ms:.0f} a read_bundle of {REAL[0]}, {read_ms:.1f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
