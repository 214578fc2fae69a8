"""Our push vs `adb push` of the same pack folder to the same fake phone.

A ~50 MB pack (the fast fixture draft with its weight file grown) goes to a fresh
folder on tests/fake_phone.py (in its own process, as a phone would be) behind the real
adb server, alternately with `adb push`
(the C++ client) and with DraftDeck's push, which also hashes every file locally
(cold: its cache is cleared each run), verifies each one's sha256 on the phone and
renames the folder into place; `adb push` does none of that. The figure is the median
of per-pair throughput ratios (ours / adb push).

    .venv/bin/python benchmarks/push.py [--mb 50] [--runs 5] [--links 0,100,40]

--links caps the phone's intake: uncapped loopback, then about what USB 3 and USB 2
phones manage with adb. The verification re-reads every file on the phone, so its
cost shows most on the uncapped loopback, where hashing is as slow as the copy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.phone import push as push_module  # noqa: E402
from app.core.phone.adb import Adb  # noqa: E402
from app.core.phone.push import DONE, PushJob  # noqa: E402
from tests.adb_harness import AdbServer  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "bundles" / "fast-draft"


def make_pack(folder: Path, mb: int) -> int:
    shutil.copytree(FIXTURE, folder)
    weight = folder / "llm.mnn.weight"
    with weight.open("ab") as handle:
        handle.write(os.urandom(mb * 1024 * 1024 - weight.stat().st_size))
    return sum(p.stat().st_size for p in folder.iterdir())


def measure(work: Path, pack: Path, total: int, runs: int, link_mbps: float) -> list[float]:
    """Per-pair throughput ratios (ours / adb push) against a phone capped at link_mbps."""
    storage = work / f"phone-{link_mbps:g}"
    phone = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_phone", str(storage), "--throttle-mbps", str(link_mbps)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert phone.stdout is not None and phone.stdin is not None
    address = phone.stdout.readline().strip()
    ours: list[float] = []
    theirs: list[float] = []
    try:
        with AdbServer(work / "adb-home") as server:
            server.client.connect(address, timeout=15)
            server.wait_state(address, "device")
            adb = Adb(server.port)
            adb_push = [server.exe, "-P", str(server.port), "-s", address, "push", str(pack)]
            for run in range(runs):
                for who in ("adb", "ours") if run % 2 == 0 else ("ours", "adb"):
                    folder = f"/data/local/tmp/bench-{who}-{run}"
                    started = time.perf_counter()
                    if who == "adb":
                        subprocess.run(
                            [*adb_push, folder], env=server.env, check=True, capture_output=True
                        )
                        theirs.append(total / (time.perf_counter() - started))
                    else:
                        push_module._hash_cache.clear()  # cold: hashing is part of the cost
                        status = PushJob(adb, address, pack, folder).run()
                        assert status.state == DONE, status.error
                        ours.append(total / (time.perf_counter() - started))
                    shutil.rmtree(storage / folder.lstrip("/"))
    finally:
        phone.stdin.close()
        phone.wait(timeout=30)
    mb = 1e6
    link = f"{link_mbps:g} MB/s link" if link_mbps else "uncapped loopback"
    ratios = [o / t for o, t in zip(ours, theirs, strict=True)]
    print(
        f"{link:>18}: adb push {statistics.median(theirs) / mb:6.1f} MB/s, "
        f"ours {statistics.median(ours) / mb:6.1f} MB/s, "
        f"ratio median {statistics.median(ratios):.3f} (min {min(ratios):.3f})"
    )
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the pack")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--links",
        default="0,100,40",
        help="phone link speeds to try, MB/s, comma-separated (0: uncapped loopback)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="draftdeck-bench-push-"))
    try:
        pack = work / "bench-pack"
        total = make_pack(pack, args.mb)
        print(f"pack: {total / 1e6:.1f} MB in {len(os.listdir(pack))} files, {args.runs} runs")
        for link in args.links.split(","):
            measure(work, pack, total, args.runs, float(link))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
