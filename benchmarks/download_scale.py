"""Peak memory and speed of a 3 GB download: ours vs plain `snapshot_download`.

The local Hub stand-in (tests/hub_server.py) runs in this process on loopback and
serves a generated pack: one large LFS file behind the CDN redirect (a random MiB
repeated, so making it costs no time) plus small files. Each download runs in a fresh
child process of its own, which reports its peak RSS and the seconds of the download
alone (not the interpreter's start), so the figures hold only the download's memory.

Per pair, interleaved (the order flips every pair):
- fresh: ours (DownloadJob: hashes every byte as read back from the file, fsyncs,
  installs) and snapshot_download of the whole repo, into empty folders;
- resumed: ours paused by a first child at half the large file, then resumed by a
  second child, which hashes the kept prefix and fetches the rest. snapshot_download
  cannot resume (a restarted one starts from zero), so the resume is compared twice
  with the same pair's snapshot_download: per byte fetched (the strict one: the
  prefix is hashed on top) and by the time to the whole file (what the user waits).

The figures are medians of the pairs: speed ratios (ours / snapshot_download, floor
0.95), peak RSS ratios (ceiling 2.0), and CPU seconds per GiB fetched.

    .venv/bin/python benchmarks/download_scale.py [--mb 3072] [--runs 3] [--throttle-mbps 0]

On loopback the stand-in server shares the 2 cores with the download, so a resume's
hashing of the kept prefix takes CPU from the server; --throttle-mbps caps the server
(as a real link would), which leaves the hash a core of its own.

Needs about twice --mb free in the temp folder (checked first) and --mb of RAM for the
server's copy of the file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPO = "bench/big-pack-MNN"
WEIGHT = "llm.mnn.weight"
MIB = 1024 * 1024


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_rss: int  # bytes
    start_rss: int  # bytes, after the imports, before the download
    cpu_seconds: float  # user + system, all threads, during the download


# -- the child: one download, in a process of its own ----------------------------------------


def _peak_rss() -> int:
    """The process's peak resident set, in bytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    except ImportError:  # Windows
        import psutil

        return int(getattr(psutil.Process().memory_info(), "peak_wset", 0))


def child(mode: str, endpoint: str, dest: Path, stop_at: int) -> int:
    import psutil
    from huggingface_hub import snapshot_download

    from app.core.hub.hub_api import HubConfig
    from app.core.hub.job import DONE, PAUSED, DownloadJob

    me = psutil.Process()
    start_rss, start_cpu = me.memory_info().rss, sum(me.cpu_times()[:2])
    start = time.perf_counter()
    if mode == "theirs":
        snapshot_download(REPO, endpoint=endpoint, token=False, cache_dir=dest)
    else:
        job = DownloadJob(REPO, dest, HubConfig(endpoint=endpoint, token=False))
        if stop_at:

            def pause_at_half() -> None:
                if job.status().done_bytes >= stop_at:
                    job.pause()

            job.listen(pause_at_half)
        status = job.run()
        wanted = PAUSED if stop_at else DONE
        if status.state != wanted:
            print(f"download ended {status.state}: {status.error}", file=sys.stderr)
            return 1
    seconds = time.perf_counter() - start
    cpu_seconds = sum(me.cpu_times()[:2]) - start_cpu
    figures = {"seconds": seconds, "peak_rss": _peak_rss(), "start_rss": start_rss}
    print(json.dumps({**figures, "cpu_seconds": cpu_seconds}))
    return 0


def _run_child(mode: str, endpoint: str, dest: Path, stop_at: int = 0) -> Run:
    env = dict(os.environ, HF_HUB_DISABLE_PROGRESS_BARS="1")
    command = [sys.executable, __file__, "--child", mode, "--endpoint", endpoint]
    command += ["--dest", str(dest), "--stop-at", str(stop_at)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} child failed:\n{done.stderr}")
    return Run(**json.loads(done.stdout.strip().splitlines()[-1]))


def _part_size(library: Path) -> int:
    """Bytes of the large file a paused download kept."""
    parts = list(library.rglob(WEIGHT + ".part"))
    return parts[0].stat().st_size if parts else 0


# -- the parent: the server, the pairs, the figures ------------------------------------------


def _check_space(work: Path, need: int) -> None:
    free = shutil.disk_usage(work).free
    if free < need:
        raise SystemExit(f"{work}: needs {need / MIB:.0f} MiB free, has {free / MIB:.0f} MiB")


def measure(mb: int, runs: int, throttle_mbps: float) -> int:
    from tests.hub_server import FakeHub

    files = {
        WEIGHT: os.urandom(MIB) * mb,
        "llm.mnn": os.urandom(200_000),
        "config.json": b'{"backend_type": "cpu"}',
        "llm_config.json": b'{"hidden_size": 128}',
    }
    total = sum(len(v) for v in files.values())
    work = Path(tempfile.mkdtemp(prefix="draftdeck-bench-big-"))
    fresh: list[tuple[Run, Run]] = []
    resumed: list[tuple[Run, int]] = []
    try:
        _check_space(work, 2 * total + 512 * MIB)
        with FakeHub() as hub:
            hub.add_repo(REPO, files)
            if throttle_mbps:
                hub.throttle_bytes_per_s = int(throttle_mbps * 1_000_000)
            del files  # the hub keeps its own reference
            for i in range(runs):
                target = work / f"ours-{i}"
                if i % 2 == 0:
                    ours = _run_child("ours", hub.endpoint, target)
                    shutil.rmtree(target)
                    theirs = _run_child("theirs", hub.endpoint, work / f"theirs-{i}")
                    shutil.rmtree(work / f"theirs-{i}")
                else:
                    theirs = _run_child("theirs", hub.endpoint, work / f"theirs-{i}")
                    shutil.rmtree(work / f"theirs-{i}")
                    ours = _run_child("ours", hub.endpoint, target)
                    shutil.rmtree(target)
                fresh.append((ours, theirs))
                _run_child("ours", hub.endpoint, target, stop_at=total // 2)
                kept = _part_size(target)
                resumed.append((_run_child("ours", hub.endpoint, target), total - kept))
                shutil.rmtree(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if throttle_mbps:
        print(f"server capped at {throttle_mbps:g} MB/s")
    _report(total, fresh, resumed)
    return 0


def _report(total: int, fresh: list[tuple[Run, Run]], resumed: list[tuple[Run, int]]) -> None:
    theirs = [t for _, t in fresh]
    print(f"payload {total / MIB:.0f} MiB, {len(fresh)} interleaved pairs")
    for name, runs in (
        ("snapshot_download", [(t, total) for t in theirs]),
        ("ours, fresh", [(o, total) for o, _ in fresh]),
        ("ours, resumed", resumed),
    ):
        print(
            f"{name + ':':19}"
            f"{statistics.median(n / r.seconds / MIB for r, n in runs):6.1f} MiB/s over "
            f"{statistics.median(n for _, n in runs) / MIB:5.0f} MiB fetched, "
            f"{statistics.median(r.cpu_seconds / (n / 2**30) for r, n in runs):4.1f} CPU s/GiB, "
            f"peak RSS {statistics.median(r.peak_rss for r, _ in runs) / MIB:4.0f} MiB "
            f"(at start {statistics.median(r.start_rss for r, _ in runs) / MIB:3.0f})"
        )
    ratios = {
        "speed, fresh": ([t.seconds / o.seconds for o, t in fresh], "floor 0.95"),
        # The bytes a resume fetched per second, against snapshot_download's: the kept
        # prefix is hashed on top, so this is the strict one.
        "speed, resumed, per byte fetched": (
            [
                (n / r.seconds) / (total / t.seconds)
                for (r, n), t in zip(resumed, theirs, strict=True)
            ],
            "floor 0.95",
        ),
        # What the user waits for: a restarted snapshot_download starts from zero.
        "speed, resumed, time to the whole file": (
            [t.seconds / r.seconds for (r, _), t in zip(resumed, theirs, strict=True)],
            "floor 0.95",
        ),
        "peak RSS, fresh": ([o.peak_rss / t.peak_rss for o, t in fresh], "ceiling 2.0"),
        "peak RSS, resumed": (
            [r.peak_rss / t.peak_rss for (r, _), t in zip(resumed, theirs, strict=True)],
            "ceiling 2.0",
        ),
    }
    for name, (values, limit) in ratios.items():
        pairs = " ".join(f"{v:.3f}" for v in values)
        print(f"{name + ' (ours / theirs):':56}{statistics.median(values):.3f}  {limit}")
        print(f"{'':56}pairs: {pairs}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=3072, help="MiB in the large file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--throttle-mbps", type=float, default=0.0, help="cap the server (0: loopback speed)"
    )
    parser.add_argument("--child", choices=("ours", "theirs"), help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--dest", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--stop-at", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.endpoint, args.dest, args.stop_at)
    return measure(args.mb, args.runs, args.throttle_mbps)


if __name__ == "__main__":
    sys.exit(main())
