"""`draftdeck tune`: measure recipe settings for a pair and (optionally) apply the best."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from app.cli import arg_types, sampling
from app.core.infra.errors import SpeculationCannotPay
from app.core.measure import phone_profiles
from app.core.measure.intervals import interval_words
from app.core.measure.measure_lock import measuring
from app.core.measure.phone_forecast import PhoneForecast
from app.core.measure.tune_apply import applicable
from app.core.measure.tune_eta import SweepProgress, time_left_text
from app.core.measure.tune_plan import (
    Setting,
    SweepPlan,
    plan_for,
    recipe_defaults,
    thread_counts,
    with_sampling,
)


def _plan(args: argparse.Namespace, plan: SweepPlan, target: Path, draft: Path) -> SweepPlan:
    """The preset `plan` as the arguments change it (the sampler's and thread counts'
    notes said)."""
    if args.tokens:
        plan = replace(plan, tokens=args.tokens)
    if args.budget is not None:
        plan = replace(plan, budget_seconds=args.budget)
    if args.min_run_seconds is not None:
        plan = replace(plan, min_run_seconds=args.min_run_seconds)
    if args.sample:
        # Checked here, so a sampler MNN would not know is told naming its file.
        sampler = sampling.recipe_sampler(target, {})
        seed = sampling.seed_for(args, sampler)
        plan = with_sampling(plan, sampler, tuple(args.temperatures or ()), seed)
        print(sampling.describe(sampler, seed), file=sys.stderr)
        if plan.temperatures:
            listed = ", ".join(f"{t:g}" for t in plan.temperatures)
            print(f"also at temperature {listed}: measured, not applied", file=sys.stderr)
    for count in thread_counts(target, draft):
        if count.note():  # a count held to the cores, or above them: said, as on the page
            print(count.note(), file=sys.stderr)
    return plan


def cmd_tune(args: argparse.Namespace) -> int:
    from app.engine.client.tune_sweeps import TuneSweeps

    target, draft = Path(args.target), Path(args.draft)
    device = phone_profiles.chosen_device()
    if args.device is not None:
        device = phone_profiles.named_device(args.device)
        if device is None:
            known = "; ".join(phone_profiles.device_names())
            return sampling.usage_error(
                args, f"no phone profile named {args.device!r}; known: {known}"
            )
    plan = plan_for("thorough" if args.thorough else "quick", recipe_defaults(target, draft))
    if not args.sample and (args.temperatures or args.seed is not None):
        flag = "--temperatures" if args.temperatures else "--seed"
        return sampling.usage_error(args, f"{flag} needs --sample (greedy decoding draws nothing)")
    plan = _plan(args, plan, target, draft)
    settings = plan.settings()
    print(
        f"measuring {len(settings)} settings x at least {plan.pairs_per_setting} run pairs "
        f"(more until the uplift's 95 % interval is within +-{plan.target_half_width:.0%} "
        f"or {plan.budget_seconds:g} s a setting are spent)",
        file=sys.stderr,
    )

    def progress(told: SweepProgress) -> None:
        print(
            f"  {told.fraction:.0%} ({told.done} run pairs), {time_left_text(told.seconds_left)}",
            file=sys.stderr,
        )

    sweeps = TuneSweeps()  # the Tune page's service; here the sweep runs in this thread
    try:
        with measuring("draftdeck tune"):  # refused (exit 1) while another measures
            run = sweeps.sweep(target, draft, plan, args.force, on_progress=progress)
    except KeyboardInterrupt:
        print("draftdeck: cancelled", file=sys.stderr)
        return 1
    except SpeculationCannotPay as exc:
        print(f"draftdeck: {exc.message} Pass --force to measure it anyway.", file=sys.stderr)
        return 1
    path = sweeps.save(run, Path(args.save) if args.save else None)
    result: dict[str, Any] = run.to_json()
    result["saved"] = str(path)
    if args.apply:
        # The phone's draft length is the forecast's choice: it may be written when the
        # run's best is refused here (tune_apply.applicable).
        best, refusal = applicable(run, device)
        if best is not None:
            result["changes"] = [
                {
                    "file": str(c.path),
                    "recipe": c.recipe or c.path.name,
                    "where": c.where,
                    "key": c.key,
                    "old": c.old,
                    "new": c.new,
                    "why": c.why,
                }
                for c in best.changes
            ]
            if isinstance(best.phone, PhoneForecast):
                result["phone"] = best.phone.to_json()
            if not args.json:
                print("Apply Best changes:")
                for change in best.changes:
                    print(f"  {change.text()}")
                if best.phone_note():
                    print(f"  {best.phone_note()}")
            best.apply()
            result["applied"] = best.label()
            result["applied_to"] = best.used_by()
        if refusal is not None:
            result["not_applied"] = refusal
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for line in format_rows(result["results"]):
        print(line)
    print(result["verdict"])
    if "applied" in result:
        print(f"applied {result['applied']}: {result['applied_to']}")
    if "not_applied" in result:
        lead = "nothing else applied" if "applied" in result else "nothing applied"
        print(f"{lead}: {result['not_applied']}")
    print(f"saved {path} (and .csv)")
    return 0


SETTING_FIELDS = tuple(field.name for field in fields(Setting))


def format_rows(rows: list[dict[str, Any]]) -> list[str]:
    """One line a setting: the uplift (median of per-pair ratios) with its 95 % interval,
    then the speeds of its own pairs (spec / plain is close to the uplift), and the plain
    baseline pooled over every setting sharing the target's settings."""
    lines = []
    for row in rows:

        def num(key: str, spec: str, row: dict[str, Any] = row) -> str:
            value = row.get(key)
            return "n/a" if value is None else f"{value:{spec}}"

        setting = Setting(**{name: row[name] for name in SETTING_FIELDS if name in row})
        lines.append(
            f"{setting.label()}: "
            f"uplift (median of pairs) {num('uplift', '.3f')}x [{_interval(row, num)}], "
            f"acceptance {num('acceptance', '.2f')}, c {num('cost_ratio', '.3f')}, "
            f"spec {num('spec_tok_s', '.1f')} vs plain "
            f"{num('paired_baseline_tok_s', '.1f')} tok/s in its pairs (plain pooled "
            f"{num('baseline_tok_s', '.1f')}), {row.get('pairs')} pairs"
            + ("" if row.get("interval_target_met") else " (interval target not met)")
            + (f" ({row['disturbed']})" if row.get("disturbed") else "")
            + (f", sampler {row['sampler']}" if row.get("sampler") else "")
            + (
                f", accepted when checked {num('checked_acceptance', '.2f')}"
                f" (expected {num('expected_acceptance', '.2f')})"
                if row.get("expected_acceptance") is not None
                else ""
            )
        )
    return lines


def _interval(row: dict[str, Any], num: Callable[[str, str], str]) -> str:
    """The row's interval worded as everywhere (intervals.interval_words), at the level
    it has, its ends as the command prints figures."""
    return interval_words(
        row.get("uplift_low") or 0.0,
        row.get("uplift_high") or 0.0,
        row.get("uplift_interval_level") or 0.0,
        bool(row.get("disturbed")),
        f"{num('uplift_low', '.3f')}-{num('uplift_high', '.3f')}",
    )


def add_parser(sub: Any) -> None:
    tune = sub.add_parser(
        "tune",
        help="measure recipe settings for a pair",
        description="Measure recipe settings for a pair: each setting runs plain and "
        "speculative decoding in turn, and its uplift (the median of the pair ratios) gets "
        "a 95 % interval; the best is named, and --apply writes it: what was measured here "
        "into this computer's settings, the draft length the phone forecast chose "
        "(--device) into the phone's recipe.",
    )
    tune.add_argument("--target", required=True, metavar="DIR", help="the target's pack folder")
    tune.add_argument("--draft", required=True, metavar="DIR", help="the draft's pack folder")
    kind = tune.add_mutually_exclusive_group()
    kind.add_argument(
        "--quick",
        action="store_true",
        help="draft length 1-4 and adaptive drafting up to 4, the rest as the recipe has "
        "it (default)",
    )
    kind.add_argument(
        "--thorough",
        action="store_true",
        help="draft length 1-8 and adaptive drafting up to 8, threads, precision and "
        "memory of the draft",
    )
    tune.add_argument("--tokens", type=int, metavar="N", help="tokens per run")
    tune.add_argument(
        "--apply",
        action="store_true",
        help="apply the best setting's measured keys, printing each change and where it "
        "goes: thread counts, precision and memory to this computer's settings for the "
        "pack (never the phone's recipe); the draft length to the phone's recipe "
        "(config.json) only as the phone forecast chose it for --device, else to this "
        "computer's settings; adaptive drafting to .draftdeck-drafting.json. Only keys the "
        "sweep measured other than the recipes run them; refused when the best is not "
        "better than the current recipe beyond noise, or the recipes changed during the sweep",
    )
    tune.add_argument(
        "--device",
        metavar="NAME",
        help="the phone whose forecast chooses the phone recipe's draft length with --apply "
        "(a phone profile, as `draftdeck forecast` lists them; default: the phone chosen "
        "in the window, if any)",
    )
    tune.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="time a setting may take while its uplift interval is still wide (default 20)",
    )
    tune.add_argument(
        "--min-run-seconds",
        type=float,
        metavar="SECONDS",
        help="decoding time a run lasts at least, repeating its generation (default 0.5)",
    )
    tune.add_argument(
        "--sample",
        action="store_true",
        help="measure with the target recipe's sampler (default: greedy, where speculative "
        "output equals plain output token for token when the target's recipe verifies "
        "exactly, i.e. not with memory low)",
    )
    tune.add_argument(
        "--temperatures",
        type=arg_types.number_list(arg_types.temperature),
        metavar="T,T,...",
        help="with --sample, also measure at these temperatures (shown, never applied: a "
        "temperature changes the output, not only the speed)",
    )
    sampling.add_seed_arg(tune)
    tune.add_argument("--save", metavar="FILE", help="where to save the results (JSON + CSV)")
    tune.add_argument("--json", action="store_true", help="print results, best, pays_off")
    tune.add_argument(
        "--force",
        action="store_true",
        help="sweep a pair that cannot gain on this MNN (marked cannot_pay; never applied)",
    )
    tune.set_defaults(func=cmd_tune)
