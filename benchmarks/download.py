"""Our download vs plain `snapshot_download` of the same repo from the same local Hub.

Both fetch a synthetic pack (one large LFS file behind the CDN redirect plus small
files) from tests/hub_server.py on loopback, into fresh folders, interleaved; the
figure is the median of per-pair throughput ratios (ours / snapshot_download). Ours
also hashes every byte and verifies it, which snapshot_download does not.

    .venv/bin/python benchmarks/download.py [--mb 64] [--runs 5] [--throttle-mbps 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from huggingface_hub import snapshot_download  # noqa: E402

from app.core.hub.hub_api import HubConfig  # noqa: E402
from app.core.hub.job import DONE, DownloadJob  # noqa: E402
from tests.hub_server import FakeHub  # noqa: E402

REPO = "bench/synthetic-pack-MNN"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64, help="size of the large file")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--throttle-mbps",
        type=float,
        default=0.0,
        help="cap the server at this many MB/s (0: loopback speed)",
    )
    args = parser.parse_args()
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    files = {
        "llm.mnn.weight": os.urandom(args.mb * 1024 * 1024),
        "llm.mnn": os.urandom(200_000),
        "config.json": b'{"backend_type": "cpu"}',
        "llm_config.json": b'{"hidden_size": 128}',
    }
    total = sum(len(v) for v in files.values())
    work = Path(tempfile.mkdtemp(prefix="draftdeck-bench-"))
    ours: list[float] = []
    theirs: list[float] = []
    ratios: list[float] = []
    try:
        with FakeHub() as hub:
            hub.add_repo(REPO, files)
            if args.throttle_mbps:
                hub.throttle_bytes_per_s = int(args.throttle_mbps * 1_000_000)
            config = HubConfig(endpoint=hub.endpoint, token=False)

            def run_ours(i: int) -> float:
                library = work / f"ours-{i}"
                start = time.perf_counter()
                status = DownloadJob(REPO, library, config).run()
                elapsed = time.perf_counter() - start
                assert status.state == DONE, status.error
                shutil.rmtree(library)
                return total / elapsed

            def run_theirs(i: int) -> float:
                cache = work / f"theirs-{i}"
                start = time.perf_counter()
                snapshot_download(REPO, endpoint=hub.endpoint, token=False, cache_dir=cache)
                elapsed = time.perf_counter() - start
                shutil.rmtree(cache)
                return total / elapsed

            run_ours(-1), run_theirs(-1)  # warm-up
            for i in range(args.runs):
                if i % 2 == 0:
                    a, b = run_ours(i), run_theirs(i)
                else:
                    b, a = run_theirs(i), run_ours(i)
                ours.append(a)
                theirs.append(b)
                ratios.append(a / b)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = 1024 * 1024
    print(
        f"payload {total / mb:.1f} MB, {args.runs} interleaved pairs"
        + (f", server capped at {args.throttle_mbps} MB/s" if args.throttle_mbps else "")
    )
    print(f"ours (verified, resumable): {statistics.median(ours) / mb:8.1f} MB/s")
    print(f"snapshot_download:          {statistics.median(theirs) / mb:8.1f} MB/s")
    print(
        f"ratio ours / snapshot_download: {statistics.median(ratios):.3f}  "
        f"(pairs: {' '.join(f'{r:.3f}' for r in ratios)})   floor 0.95"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
