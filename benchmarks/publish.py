"""Our publish (file by file, to report progress) vs huggingface_hub's `upload_folder`
(its LFS uploads in parallel), the same pack to the same local Hub stand-in.

A fixture pack with `--shards` extra LFS files of `--mb` MB each, fresh random bytes for
every upload (the stand-in keeps blobs it has seen and would skip them), into a new repo
each time; interleaved pairs, the figure is the median of per-pair time ratios (ours /
upload_folder: above 1 is slower). Loopback has no network latency, so this shows what
the one-file-at-a-time order costs in the client and server work only.

    .venv/bin/python benchmarks/publish.py [--mb 32] [--shards 4] [--runs 5]
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

os.environ["HF_HUB_DISABLE_XET"] = "1"  # the stand-in speaks the classic LFS upload only
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"

from huggingface_hub import HfApi  # noqa: E402

from app.core.hub.hub_api import HubConfig  # noqa: E402
from app.core.hub.publish import publish, publish_plan  # noqa: E402
from tests.hub_server import DEFAULT_TOKEN, FakeHub  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "bundles" / "fast-draft"


def _pack(folder: Path, shards: int, size: int) -> Path:
    shutil.copytree(FIXTURE, folder)
    for n in range(shards):
        (folder / f"shard-{n}.bin").write_bytes(os.urandom(size))
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=32, help="size of each extra LFS file")
    parser.add_argument("--shards", type=int, default=4, help="extra LFS files in the pack")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="draftdeck-bench-"))
    ratios: list[float] = []
    ours: list[float] = []
    theirs: list[float] = []
    try:
        with FakeHub() as hub:
            config = HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN)
            api = HfApi(endpoint=hub.endpoint, token=DEFAULT_TOKEN)

            def run_ours(i: int) -> float:
                pack = _pack(work / f"ours-{i}", args.shards, args.mb << 20)
                plan = publish_plan(pack, f"bench/ours{i + 1}")
                start = time.perf_counter()
                publish(config, plan)
                elapsed = time.perf_counter() - start
                shutil.rmtree(pack)
                return elapsed

            def run_theirs(i: int) -> float:
                pack = _pack(work / f"theirs-{i}", args.shards, args.mb << 20)
                repo = f"bench/theirs{i + 1}"
                start = time.perf_counter()
                api.create_repo(repo, exist_ok=True)
                api.upload_folder(repo_id=repo, folder_path=pack)
                elapsed = time.perf_counter() - start
                shutil.rmtree(pack)
                return elapsed

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
    total = args.shards * args.mb
    print(f"pack: fast-draft + {args.shards} x {args.mb} MB LFS files, {args.runs} pairs")
    print(f"ours (file by file, progress): {statistics.median(ours):6.2f} s")
    print(f"upload_folder (parallel LFS):  {statistics.median(theirs):6.2f} s  ({total} MB)")
    print(
        f"time ratio ours / upload_folder: {statistics.median(ratios):.3f}  "
        f"(pairs: {' '.join(f'{r:.3f}' for r in ratios)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
