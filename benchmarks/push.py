"""Our push vs `adb push` of the same pack folder to the same fake phone.

A ~50 MB pack (the fast fixture draft with its weight file grown) goes to a fresh
folder on tests/fake_phone/ (in its own process, as a phone would be) behind the real
adb server, alternately with `adb push`
(the C++ client) and with DraftDeck's push, which also hashes every file locally
(cold: its cache is cleared each run), verifies each one's sha256 on the phone and
renames the folder into place; `adb push` does none of that. The figure is the median
of per-pair throughput ratios (ours / adb push).

    .venv/bin/python benchmarks/push.py [--mb 50] [--runs 5] [--links 0,100,40]

--links caps the phone's intake: uncapped loopback, then about what USB 3 and USB 2
phones manage with adb. The verification re-reads every file on the phone, so its
cost shows most on the uncapped loopback, where hashing is as slow as the copy.

Then a push killed halfway: `draftdeck push` (its own process) is SIGKILLed once the
phone has received half the pack's bytes, and pushed again; the figure is the bytes the
phone received in the second push as a share of the pack (median of --resume-runs,
floor 0.55), with every file on the phone checked by sha256. The phone runs in this
process for that part (it counts the bytes), on a 40 MB/s link.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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

from app.core.phone import local_files  # noqa: E402
from app.core.phone.adb import Adb  # noqa: E402
from app.core.phone.local_files import pack_files  # noqa: E402
from app.core.phone.push import DONE, PushJob  # noqa: E402
from tests.adb_harness import AdbServer  # noqa: E402
from tests.fake_phone import FakePhone  # noqa: E402

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
                        local_files._hash_cache.clear()  # cold: hashing is part of the cost
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


RESUME_LINK = 40e6  # bytes/s: the kill lands within a few kB of halfway
RESUME_FLOOR = 0.55


def _cli_push(pack: Path, address: str, root: str, env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "app", "push", str(pack), "--serial", address]
    return subprocess.Popen(
        [*command, "--dest", root, "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def measure_resume(work: Path, pack: Path, total: int, runs: int) -> list[float]:
    """Shares of the pack the second push sent, after the first was killed halfway."""
    shares = []
    with FakePhone(work / "phone-resume") as phone, AdbServer(work / "adb-resume") as server:
        phone.throttle_bytes_per_s = RESUME_LINK
        server.connect(phone)
        env = {**server.env, "DRAFTDECK_HOME": str(work / "home")}
        for run in range(runs):
            root = f"/data/local/tmp/resume-{run}"
            start = phone.bytes_received
            killed = _cli_push(pack, phone.address, root, env)
            while phone.bytes_received - start < total // 2 and killed.poll() is None:
                time.sleep(0.0005)
            killed.kill()  # SIGKILL: nothing of ours gets to tidy up
            killed.communicate()
            at_kill = (phone.bytes_received - start) / total
            phone.settle()  # the phone writes what was on its way, as a phone does
            before = phone.bytes_received
            again = _cli_push(pack, phone.address, root, env)
            out, err = again.communicate()
            assert again.returncode == 0, err
            result = json.loads(out.splitlines()[-1])
            share = (phone.bytes_received - before) / total
            on_phone = phone.local(f"{root}/{pack.name}")
            for item in pack_files(pack):
                assert _sha256(on_phone / item.rel) == _sha256(item.path), item.rel
            print(
                f"  run {run}: killed at {at_kill:.1%} of the pack; the second push sent "
                f"{share:.1%} (kept {result.get('resumed_bytes', 0) / total:.1%}); sha256 ok"
            )
            shares.append(share)
            shutil.rmtree(phone.local(root))
    verdict = "ok" if statistics.median(shares) <= RESUME_FLOOR else "ABOVE THE FLOOR"
    print(
        f"resumed push after a kill at 50 %: sent {statistics.median(shares):.1%} of the pack "
        f"(median of {runs}; max {max(shares):.1%}); floor {RESUME_FLOOR:.0%}: {verdict}"
    )
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the pack")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resume-runs", type=int, default=5, help="0: skip the kill test")
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
        for link in filter(None, args.links.split(",")):
            measure(work, pack, total, args.runs, float(link))
        if args.resume_runs:
            shares = measure_resume(work, pack, total, args.resume_runs)
            if statistics.median(shares) > RESUME_FLOOR:
                return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
