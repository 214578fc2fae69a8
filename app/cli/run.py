"""`draftdeck bench` and `draftdeck generate`: a pair run by the engine, measured or
streamed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli import sampling
from app.cli.arg_types import draft_length, number, whole_number
from app.cli.drafting import add_drafting_args, chosen_drafting
from app.core.infra.errors import SpeculationCannotPay
from app.core.infra.jsonfile import read_json_object, read_named_text
from app.core.measure.bench import MIN_RUN_SECONDS
from app.core.measure.chat_record import context_note, drafting_words
from app.core.measure.intervals import MIN_VALUES_FOR_LEVEL, interval_words
from app.core.measure.measure_lock import measuring
from app.core.measure.prefill_pace import PrefillPace, prefill_words

# Twice the trust floor: the repeats per run are counted from the warm-up's time, and a
# measured run may go faster than the warm-up did.
TARGET_HELP = "the target's pack folder"
DEFAULT_MIN_RUN_SECONDS = 2 * MIN_RUN_SECONDS

if TYPE_CHECKING:  # the engine side is imported only by the commands that run it
    from app.engine.protocol import Done, JsonObject, Rounds


def _read_recipe(path: str | None) -> JsonObject:
    if not path:
        return {}
    return read_json_object(Path(path))


def _engine_overrides(args: argparse.Namespace) -> tuple[JsonObject, JsonObject]:
    return _read_recipe(args.recipe), _read_recipe(args.draft_recipe)


def _fmt(value: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{suffix}"


def _interval(result: dict[str, Any]) -> str:
    """The uplift's interval worded as everywhere (intervals.interval_words), at the
    level its pairs give, its ends as the command prints figures."""
    low, high = result.get("uplift_low"), result.get("uplift_high")
    return interval_words(
        low or 0.0,
        high or 0.0,
        result.get("uplift_interval_level") or 0.0,
        bool(result.get("disturbed")),
        f"{_fmt(low, '.3f', 'x')} to {_fmt(high, '.3f', 'x')}",
    )


def _positions(values: list[float | None]) -> str:
    return ", ".join(_fmt(p, ".2f") for p in values)


def _print_bench(result: dict[str, Any]) -> None:
    sampled = result["lossless"] is None
    seed = f" (seed {result['seed']}, run pair i draws with seed + i)" if sampled else ""
    expected = [
        ("Accepted when checked", _fmt(result["checked_acceptance"], ".3f")),
        ("Expected (same basis)", _fmt(result["expected_acceptance"], ".3f")),
        ("Per-position expected", _positions(result["expected_by_position"])),
    ]
    lossless = (
        "not compared: sampling keeps the target's distribution, not its exact tokens"
        if sampled
        else ("yes" if result["lossless"] else "no")
    )
    rows = [
        ("Sampler", result["sampler"] + seed),
        ("Baseline (plain)", _fmt(result["baseline_tok_s"], ".1f", " tok/s")),
        ("Speculative", _fmt(result["spec_tok_s"], ".1f", " tok/s")),
        (
            "Uplift (median of pairs)",
            _fmt(result["uplift"], ".3f", "x")
            + (" (not a speedup: see the note)" if result.get("cannot_pay") else ""),
        ),
        ("Uplift interval", _interval(result)),
        (
            "Run-to-run variation",
            f"plain {_fmt(result.get('baseline_cv'), '.1%')}, "
            f"speculative {_fmt(result.get('spec_cv'), '.1%')} (coefficient of variation)",
        ),
        ("Acceptance", _fmt(result["acceptance"], ".3f")),
        ("Mean accepted length", _fmt(result["mean_accepted_length"], ".2f", " tokens/round")),
        ("Per-position acceptance", _positions(result["per_position_acceptance"])),
        *(expected if sampled else []),
        ("Cost ratio c", _fmt(result["cost_ratio"], ".3f")),
        ("Predicted speedup", _fmt(result["predicted_speedup"], ".3f", "x")),
        ("Measured / predicted", _fmt(result["prediction_ratio"], ".3f")),
        ("Verify agreement", _fmt(result["verify_agreement"]["agreement"], ".3f")),
        ("Lossless (same output)", lossless),
        ("Drafting", drafting_words(result)),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if result.get("cannot_pay"):
        print(
            f"Note: {result['cannot_pay']} (linear_rollback false): rejected draft tokens "
            "cannot be taken out of the target's state, so it is verified one token at a "
            "time; the output is right, the uplift means nothing."
        )
    for warning in result.get("warnings") or []:
        print(f"Warning: {warning}.")
    print(result["verify_note"])
    if not result["verify_agreement"]["exact"] and not result["lossless_expected"]:
        print(
            'Note: memory "low" quantizes activations at run time, so the verify pass may '
            'differ from single steps; memory "normal" verifies exactly but keeps fp32 '
            "weights (about 8x the RAM of a 4-bit pack)."
        )


def cmd_bench(args: argparse.Namespace) -> int:
    from app.engine.client.bench import DEFAULT_PROMPT, BenchPlan, run_bench
    from app.engine.client.engine_client import EngineClient

    target_cfg, draft_cfg = _engine_overrides(args)
    # A missing or non-UTF-8 prompt file is a FileError naming it, not a traceback.
    prompt = (
        read_named_text(Path(args.prompt_file))
        if args.prompt_file
        else (args.prompt or DEFAULT_PROMPT)
    )
    if args.seed is not None and not args.sample:
        return sampling.usage_error(args, "--seed needs --sample (greedy decoding draws nothing)")
    sampler = (
        sampling.recipe_sampler(Path(args.target), target_cfg, args.recipe) if args.sample else None
    )
    plan = BenchPlan(
        args.target,
        args.draft,
        target_cfg,
        draft_cfg,
        args.d,
        args.tokens,
        args.runs,
        (prompt,),
        sampler=sampler,
        seed=sampling.seed_for(args, sampler),
        min_run_seconds=args.min_run_seconds,
        drafting=chosen_drafting(args, args.draft),
    )

    def progress(done: int, total: int) -> None:
        print(f"run {done}/{total}", file=sys.stderr)

    try:
        # Bench times runs: refused (exit 1) while another measurement runs.
        with measuring("draftdeck bench"), EngineClient() as client:
            result = run_bench(client, plan, progress, force=args.force).to_json()
    except SpeculationCannotPay as exc:
        print(f"draftdeck: {exc.message} Pass --force to measure it anyway.", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_bench(result)
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import Generate, Load, Mode

    # Read first: a file that cannot be read is said before any model loads.
    prompt = read_named_text(Path(args.prompt_file)) if args.prompt_file else args.prompt

    if conflict := sampling.conflicting_flags(args):
        return sampling.usage_error(args, conflict)
    target_cfg, draft_cfg = _engine_overrides(args)
    sampler = sampling.chosen_sampler(args, Path(args.target), target_cfg)
    seed = sampling.seed_for(args, sampler)
    with EngineClient() as client:
        # A pair the engine would refuse is said before any worker starts.
        loaded = client.load(
            Load(
                target=args.target,
                draft=args.draft,
                target_config=target_cfg,
                draft_config=draft_cfg,
                draft_length=args.d,
            )
        )
        if loaded.memory_warning:
            print(f"draftdeck: {loaded.memory_warning}", file=sys.stderr)
        if loaded.drafting_problem:
            print(f"draftdeck: {loaded.drafting_problem}", file=sys.stderr)
        if loaded.settings_problem:
            print(f"draftdeck: {loaded.settings_problem}", file=sys.stderr)

        stream = _streamer(show_text=not args.json)
        mode = Mode.SPECULATIVE if args.draft and not args.plain else Mode.PLAIN
        if not args.json and seed is not None:  # greedy draws nothing: nothing to repeat
            print(sampling.describe(sampler, seed), file=sys.stderr)
        request = Generate(
            prompt=prompt,
            max_tokens=args.max_tokens,
            mode=mode,
            chat=not args.raw,
            sampler=sampler,
            seed=seed,
            drafting=chosen_drafting(args, args.draft) if args.draft else None,
        )
        done = client.run(request, on_rounds=stream)
    _print_done(done, seed, as_json=args.json)
    return 0


def _streamer(show_text: bool) -> Callable[[Rounds], None]:
    """What `generate` does with each Rounds event: prefill progress on stderr, the
    reply's text on stdout as it comes (unless `show_text` is off)."""
    pace = PrefillPace()
    pace.mark("target")  # the target starts reading as the request goes out

    def stream(event: Rounds) -> None:
        if event.prefill_total:
            model, done_tokens, total = (
                event.prefill_model,
                event.prefill_done,
                event.prefill_total,
            )
            left = pace.seconds_left(model, done_tokens, total)
            line = prefill_words(model, done_tokens, total, left)
            done = done_tokens >= total
            print(f"\r{line}", end="\n" if done else "", file=sys.stderr, flush=True)
        elif show_text:
            sys.stdout.write(event.text)
            sys.stdout.flush()

    return stream


def _print_done(done: Done, seed: int | None, as_json: bool) -> None:
    """The end of `generate`: the JSON result (or the streamed text's last newline), and
    a note when the context window ended the reply."""
    if as_json:
        print(
            json.dumps(
                {
                    "sampler": done.stats.sampler,
                    "seed": seed,  # None: greedy, nothing drawn
                    "text": done.text,
                    "tokens": list(done.tokens),
                    "stopped_by": done.stopped_by,
                    "stats": done.stats.to_json(),
                },
                indent=2,
            )
        )
    else:
        print()
        if done.stats.asides:
            print(f"draftdeck: {drafting_words(done.stats.to_json())}", file=sys.stderr)
    window_note = context_note(done.stats.to_json(), done.stopped_by)
    if window_note:
        print(f"draftdeck: {window_note}", file=sys.stderr)


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recipe", metavar="FILE", help="JSON whose keys override the target config")
    p.add_argument(
        "--draft-recipe",
        metavar="FILE",
        help="JSON whose keys override the draft recipe (config_cpu.json, or "
        "draft_config_cpu.json in a pack without it)",
    )
    p.add_argument(
        "-d",
        type=draft_length,
        metavar="N",
        help="draft length (draft_predict_length; adaptive drafting's most per round)",
    )
    add_drafting_args(p)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser(
        "bench",
        help="measure speculative against plain decoding",
        description="Measure speculative against plain decoding in interleaved run pairs, "
        "with exact statistics: tok/s, the uplift and its 95 % interval, acceptance, the "
        "verify agreement and whether the output was lossless. Greedy unless --sample.",
    )
    bench.add_argument("--target", required=True, metavar="DIR", help=TARGET_HELP)
    bench.add_argument("--draft", required=True, metavar="DIR", help="the draft's pack folder")
    _engine_args(bench)
    bench.add_argument(
        "--tokens", type=whole_number(1), default=128, metavar="N", help="tokens per run"
    )
    bench.add_argument(
        "--runs",
        type=whole_number(1),
        default=MIN_VALUES_FOR_LEVEL,  # fewer pairs cannot give a 95 % uplift interval
        metavar="N",
        help=f"measured run pairs (default {MIN_VALUES_FOR_LEVEL}, the fewest for a 95 %% "
        "interval)",
    )
    bench.add_argument(
        "--min-run-seconds",
        type=number(0.0),
        default=DEFAULT_MIN_RUN_SECONDS,
        metavar="SECONDS",
        help="repeat each run's generation until it decodes about this long (default "
        f"%(default)g; under {MIN_RUN_SECONDS:g} s a run is too short to trust; 0: once)",
    )
    group = bench.add_mutually_exclusive_group()
    group.add_argument("--prompt", metavar="TEXT", help="one prompt instead of the fixed ones")
    group.add_argument("--prompt-file", metavar="F", help="read that prompt from a UTF-8 file")
    bench.add_argument("--json", action="store_true", help="print the stable JSON result")
    bench.add_argument(
        "--sample",
        action="store_true",
        help="measure with the recipe's sampler (default: greedy, where speculative "
        "output must equal plain output token for token)",
    )
    sampling.add_seed_arg(bench)
    bench.add_argument(
        "--force",
        action="store_true",
        help="measure a pair that cannot gain on this MNN (marked cannot_pay)",
    )
    bench.set_defaults(func=cmd_bench)

    gen = sub.add_parser(
        "generate",
        help="generate text with a target (and a draft)",
        description="Generate text with a target, speculatively when a draft is given; the "
        "text streams to stdout, the sampler and seed go to stderr (statistics with --json).",
    )
    gen.add_argument("--target", required=True, metavar="DIR", help=TARGET_HELP)
    gen.add_argument(
        "--draft", metavar="DIR", help="the draft's pack folder (without: plain decoding)"
    )
    _engine_args(gen)
    prompt = gen.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", metavar="TEXT", help="the user's message")
    prompt.add_argument(
        "--prompt-file", metavar="F", help="read the prompt from a UTF-8 file (or <(command))"
    )
    gen.add_argument(
        "--max-tokens",
        type=whole_number(1),
        default=256,
        metavar="N",
        help="stop after this many tokens (default %(default)s)",
    )
    gen.add_argument("--plain", action="store_true", help="plain decoding even with a draft")
    gen.add_argument("--raw", action="store_true", help="no chat template")
    sampling.add_sampler_args(gen)
    gen.add_argument("--json", action="store_true", help="print text and statistics as JSON")
    gen.set_defaults(func=cmd_generate)
