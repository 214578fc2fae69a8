"""Does a Quick tune say the same thing on a quiet and on a busy machine?

The same Quick tune of the fixture fast pair (tests/fixtures/bundles/fast-target and
fast-draft, copied to a temporary folder with the tests' desktop recipe: memory normal,
one thread), run in turn without and with background load: two busy-loop processes
this script starts and stops itself. Reported: each run's rows (uplift with its 95 %
interval, pooled plain tok/s), the chosen best, the verdict, and whether the best and
the verdict agree and the best's intervals overlap.

    .venv/bin/python benchmarks/tune_noise.py [--tokens 48] [--rounds 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.measure.intervals import MedianInterval, overlaps  # noqa: E402
from app.core.measure.tune_plan import plan_for, recipe_defaults  # noqa: E402
from app.core.measure.tune_results import best_result, rows  # noqa: E402
from app.core.measure.tune_run import TuneRun  # noqa: E402
from app.engine.client.engine_client import EngineClient  # noqa: E402
from app.engine.client.tune_runner import run_sweep  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
DESKTOP_RECIPE = {"memory": "normal", "thread_num": 1}  # as tests/conftest.py


def _busy() -> None:
    while True:
        pass


def _copy_pair(into: Path) -> tuple[Path, Path]:
    paths = []
    for name, recipe in (("fast-target", "config.json"), ("fast-draft", "config_cpu.json")):
        dest = into / name
        shutil.copytree(FIXTURES / name, dest)
        data = json.loads((dest / recipe).read_text())
        data.update(DESKTOP_RECIPE)
        (dest / recipe).write_text(json.dumps(data, indent=4))
        paths.append(dest)
    return paths[0], paths[1]


def _tune(tokens: int, load: int) -> TuneRun:
    busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(load)]
    for proc in busy:
        proc.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            target, draft = _copy_pair(Path(tmp))
            plan = replace(plan_for("quick", recipe_defaults(target, draft)), tokens=tokens)
            with EngineClient() as client:
                return run_sweep(client, target, draft, plan)
    finally:
        for proc in busy:
            proc.terminate()
            proc.join()


def _report(name: str, run: TuneRun) -> dict[str, Any]:
    best = best_result(run.results)
    assert best is not None
    print(f"{name}:")
    for row in rows(run.results):
        print(
            f"  d={row['draft_length']}: uplift {row['uplift']:.2f}x "
            f"[{row['uplift_low']:.2f}-{row['uplift_high']:.2f}], plain (pooled) "
            f"{row['baseline_tok_s']:,.0f} tok/s, {row['pairs']} pairs, "
            f"{row['seconds']:.1f} s{' (re-measured)' if row['remeasured'] else ''}"
            f"{'' if row['interval_target_met'] else ' (interval target not met)'}"
        )
    print(f"  best: {best.setting.label()}; {run.verdict()}")
    return {
        "best": best.setting.draft_length,
        "pays_off": run.pays_off,
        "interval": best.interval,
        "rows": rows(run.results),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=1, help="quiet/busy rounds, in turn")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} logical CPUs; busy load: 2 spinning processes", file=sys.stderr)
    results: list[dict[str, Any]] = []
    for i in range(args.rounds):
        for name, load in (("quiet", 0), ("busy", 2)):
            out = _report(f"{name} (round {i + 1})", _tune(args.tokens, load))
            results.append({"name": name, **out})
    bests = {r["best"] for r in results}
    verdicts = {r["pays_off"] for r in results}
    intervals: list[MedianInterval] = [r["interval"] for r in results]
    overlap = all(overlaps(a, b) for a in intervals for b in intervals)
    print(
        f"best agrees: {len(bests) == 1} ({sorted(bests)}); verdict agrees: "
        f"{len(verdicts) == 1}; best's intervals overlap: {overlap}"
    )
    if args.json:
        for r in results:
            r["interval"] = [r["interval"].low, r["interval"].high]
        print(json.dumps(results, indent=2))
    return 0 if len(bests) == 1 and len(verdicts) == 1 and overlap else 1


if __name__ == "__main__":
    sys.exit(main())
