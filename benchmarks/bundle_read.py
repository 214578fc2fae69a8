"""Reading a bundle must take milliseconds and never touch the weights.

Makes a copy of the fixture target whose weight file is a 4 GiB sparse file (as big as
a real 8B target's), then times `read_bundle` on it against the fixture itself. The
ratio stays near 1 when reading ignores the weights' size.

    .venv/bin/python benchmarks/bundle_read.py
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.pack.bundle import read_bundle  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "bundles" / "qwen3-target"
BIG = 4 << 30


def _median_ms(folder: Path, runs: int = 200) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        read_bundle(folder)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big"
        shutil.copytree(FIXTURE, big)
        with (big / "llm.mnn.weight").open("r+b") as handle:
            handle.truncate(BIG)
        # Interleave to share the machine's noise between the two.
        small_ms, big_ms = [], []
        for _ in range(5):
            small_ms.append(_median_ms(FIXTURE))
            big_ms.append(_median_ms(big))
    small, large = statistics.median(small_ms), statistics.median(big_ms)
    print(f"read_bundle, fixture target:        {small:.3f} ms")
    print(f"read_bundle, same with 4 GiB weights: {large:.3f} ms")
    print(f"ratio big/small: {large / small:.2f} (1.0 = weights' size does not matter)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
