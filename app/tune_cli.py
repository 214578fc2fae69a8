"""`draftdeck tune`: measure recipe settings for a pair and (optionally) apply the best."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.core.errors import SpeculationCannotPay
from app.core.tune import best_result, new_run_path, plan_for, recipe_defaults
from app.core.tune_apply import apply_setting


def cmd_tune(args: argparse.Namespace) -> int:
    from app.engine.client import EngineClient
    from app.engine.tune_runner import run_sweep

    target, draft = Path(args.target), Path(args.draft)
    plan = plan_for("thorough" if args.thorough else "quick", recipe_defaults(target, draft))
    if args.tokens:
        from dataclasses import replace

        plan = replace(plan, tokens=args.tokens)
    settings = plan.settings()
    print(
        f"measuring {len(settings)} settings x {plan.pairs_per_setting} run pairs", file=sys.stderr
    )

    def progress(done: int, total: int) -> None:
        print(f"  {done}/{total} run pairs", file=sys.stderr)

    try:
        with EngineClient() as client:
            run = run_sweep(client, target, draft, plan, on_progress=progress, force=args.force)
    except KeyboardInterrupt:
        print("draftdeck: cancelled", file=sys.stderr)
        return 1
    except SpeculationCannotPay as exc:
        print(f"draftdeck: {exc.message} Pass --force to measure it anyway.", file=sys.stderr)
        return 1
    path = args.save or new_run_path(draft)
    run.save(Path(path))
    result: dict[str, Any] = run.to_json()
    result["saved"] = str(path)
    best = best_result(run.results)
    if args.apply and best is not None and run.cannot_pay is None:
        apply_setting(best.setting, target, draft)
        result["applied"] = best.setting.label()
    elif args.apply and run.cannot_pay is not None:
        result["not_applied"] = run.cannot_pay
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for row in result["results"]:
        print(
            f"d={row['draft_length']} draft {row['draft_threads']}t "
            f"{row['draft_precision']}/{row['draft_memory']} target {row['target_threads']}t: "
            f"uplift {row['uplift']:.3f}x, acceptance {row['acceptance']:.2f}, "
            f"c {row['cost_ratio']:.3f}, {row['spec_tok_s']:.1f} vs "
            f"{row['baseline_tok_s']:.1f} tok/s"
        )
    print(result["verdict"])
    if "applied" in result:
        print(f"applied {result['applied']} to the pair's recipes")
    if "not_applied" in result:
        print(f"nothing applied: {result['not_applied']}")
    print(f"saved {path} (and .csv)")
    return 0


def add_parser(sub: Any) -> None:
    tune = sub.add_parser("tune", help="measure recipe settings for a pair")
    tune.add_argument("--target", required=True, metavar="DIR")
    tune.add_argument("--draft", required=True, metavar="DIR")
    kind = tune.add_mutually_exclusive_group()
    kind.add_argument(
        "--quick",
        action="store_true",
        help="draft length 1-4, the rest as the recipe has it (default)",
    )
    kind.add_argument(
        "--thorough",
        action="store_true",
        help="draft length 1-8, threads, precision and memory of the draft",
    )
    tune.add_argument("--tokens", type=int, metavar="N", help="tokens per run")
    tune.add_argument(
        "--apply",
        action="store_true",
        help="write the best setting into the recipes (config.json and config_cpu.json)",
    )
    tune.add_argument("--save", metavar="FILE", help="where to save the results (JSON + CSV)")
    tune.add_argument("--json", action="store_true", help="print results, best, pays_off")
    tune.add_argument(
        "--force",
        action="store_true",
        help="sweep a pair that cannot gain on this MNN (marked cannot_pay; never applied)",
    )
    tune.set_defaults(func=cmd_tune)
