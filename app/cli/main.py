"""The `draftdeck` command: the GUI with no arguments, headless commands otherwise."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app import __version__
from app.core.infra.errors import CodedError, FileError, SpeculationCannotPay
from app.core.infra.jsonfile import read_json_object
from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo, read_bundle


def _print_info(info: BundleInfo) -> None:
    tok = info.tokenizer
    quant = f"{info.quant_bits}-bit, block {info.quant_block}" if info.quant_bits else "unknown"
    rows = [
        ("Pack", info.name),
        ("Path", str(info.path)),
        ("Role", info.role),
        ("Model type", info.model_type),
        ("Attention", info.attention + (" + LinearAttention ops" if info.linear_attention else "")),
        ("Hidden size", str(info.hidden_size)),
        ("Layers", str(info.layers)),
        ("Vocabulary", str(info.vocab_size) if info.vocab_size is not None else "unknown"),
        ("Quantization", quant),
        ("Tokenizer", f"{tok.file} ({tok.type}), sha256 {tok.sha256[:12]}"),
        ("Special ids", " ".join(map(str, tok.special_ids)) or "-"),
        (
            "Stop ids",
            ", ".join(f"{s.id} {s.text or '?'} ({', '.join(s.sources)})" for s in tok.stop_tokens)
            or "-",
        ),
        ("Chat template", (info.chat_template_sha256 or "none")[:12]),
        ("Visual", "yes" if info.visual else "no"),
        ("Recipes", ", ".join(info.recipe_files) or "none"),
        ("Size", format_bytes(info.size_bytes)),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def _cmd_info(args: argparse.Namespace) -> int:
    try:
        info = read_bundle(Path(args.pack))
    except FileError as exc:
        if args.json:
            print(
                json.dumps(
                    {"error": {"code": exc.code, "file": str(exc.path), "message": exc.problem}}
                )
            )
        print(f"draftdeck: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(info.to_json(), indent=2))
    else:
        _print_info(info)
    return 0


def _read_recipe(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    return read_json_object(Path(path))


def _engine_overrides(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    return _read_recipe(args.recipe), _read_recipe(args.draft_recipe)


def _fmt(value: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{suffix}"


def _print_bench(result: dict[str, Any]) -> None:
    positions = ", ".join(_fmt(p, ".2f") for p in result["per_position_acceptance"])
    rows = [
        ("Baseline (plain)", _fmt(result["baseline_tok_s"], ".1f", " tok/s")),
        ("Speculative", _fmt(result["spec_tok_s"], ".1f", " tok/s")),
        (
            "Uplift (median of pairs)",
            _fmt(result["uplift"], ".3f", "x")
            + (" (not a speedup: see the note)" if result.get("cannot_pay") else ""),
        ),
        (
            f"Uplift interval ({_fmt(result.get('uplift_interval_level'), '.0%')})",
            f"{_fmt(result.get('uplift_low'), '.3f', 'x')} to "
            f"{_fmt(result.get('uplift_high'), '.3f', 'x')}",
        ),
        (
            "Run-to-run variation",
            f"plain {_fmt(result.get('baseline_cv'), '.1%')}, "
            f"speculative {_fmt(result.get('spec_cv'), '.1%')} (coefficient of variation)",
        ),
        ("Acceptance", _fmt(result["acceptance"], ".3f")),
        ("Mean accepted length", _fmt(result["mean_accepted_length"], ".2f", " tokens/round")),
        ("Per-position acceptance", positions),
        ("Cost ratio c", _fmt(result["cost_ratio"], ".3f")),
        ("Predicted speedup", _fmt(result["predicted_speedup"], ".3f", "x")),
        ("Measured / predicted", _fmt(result["prediction_ratio"], ".3f")),
        ("Verify agreement", _fmt(result["verify_agreement"]["agreement"], ".3f")),
        ("Lossless (same output)", "yes" if result["lossless"] else "no"),
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


def _cmd_bench(args: argparse.Namespace) -> int:
    from app.engine.client.bench import DEFAULT_PROMPT, BenchPlan, run_bench
    from app.engine.client.engine_client import EngineClient

    target_cfg, draft_cfg = _engine_overrides(args)
    prompt = (
        Path(args.prompt_file).read_text(encoding="utf-8")
        if args.prompt_file
        else (args.prompt or DEFAULT_PROMPT)
    )
    plan = BenchPlan(
        args.target, args.draft, target_cfg, draft_cfg, args.d, args.tokens, args.runs, (prompt,)
    )

    def progress(done: int, total: int) -> None:
        print(f"run {done}/{total}", file=sys.stderr)

    try:
        with EngineClient() as client:
            result = run_bench(client, plan, progress, force=args.force)
    except SpeculationCannotPay as exc:
        print(f"draftdeck: {exc.message} Pass --force to measure it anyway.", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_bench(result)
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import Generate, Load, Rounds

    target_cfg, draft_cfg = _engine_overrides(args)
    with EngineClient() as client:
        loaded = client.run(
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

        def stream(event: Rounds) -> None:
            if not args.json:
                sys.stdout.write(event.text)
                sys.stdout.flush()

        mode = "speculative" if args.draft and not args.plain else "plain"
        done = client.run(
            Generate(prompt=args.prompt, max_tokens=args.max_tokens, mode=mode, chat=not args.raw),
            on_rounds=stream,
        )
    if args.json:
        print(
            json.dumps(
                {
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
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from app.core.pack.compat import assess_paths
    from app.core.pack.verdict import BLOCKED

    verdict = assess_paths(Path(args.target), Path(args.draft))  # each bundle read once
    if any(reason.code == "broken_bundle" for reason in verdict.reasons):
        code = 2
    else:
        code = 1 if verdict.blocked else 0
    if args.json:
        print(json.dumps(verdict.to_json(), indent=2))
        return code
    print(
        f"{verdict.label}"
        + (f" (target looks like {verdict.target_model})" if verdict.target_model else "")
    )
    marks = {BLOCKED: "BLOCKED", "warning": "warning", "info": "info"}
    for reason in verdict.reasons:
        evidence = ""
        if reason.severity != "info":
            evidence = f"  [target: {reason.target}; draft: {reason.draft}]"
        print(f"  {marks[reason.severity]:<8} {reason.message}{evidence}")
    return code


def _cmd_gui(args: argparse.Namespace) -> int:
    raise AssertionError("`gui` is handled by main()")  # a marker for the parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draftdeck",
        description="Speculative decoding workbench for MNN draft packs. "
        "Without a command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"draftdeck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.set_defaults(func=_cmd_gui)
    info = sub.add_parser("info", help="describe an MNN bundle folder")
    info.add_argument("pack", metavar="PACK_DIR")
    info.add_argument("--json", action="store_true", help="print the stable JSON description")
    info.set_defaults(func=_cmd_info)

    check = sub.add_parser(
        "check",
        help="can this draft serve this target? (exit 0 ok, 1 blocked, 2 unreadable bundle)",
    )
    check.add_argument("target", metavar="TARGET")
    check.add_argument("draft", metavar="DRAFT")
    check.add_argument("--json", action="store_true", help="print the stable JSON verdict")
    check.set_defaults(func=_cmd_check)

    from app.cli.hub import add_parsers as add_hub_parsers
    from app.cli.phone import add_parsers as add_phone_parsers
    from app.cli.recipe import add_parser as add_recipe_parser
    from app.cli.tune import add_parser as add_tune_parser

    add_recipe_parser(sub)
    add_hub_parsers(sub)
    add_tune_parser(sub)
    add_phone_parsers(sub)

    def engine_args(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--recipe", metavar="FILE", help="JSON whose keys override the target config"
        )
        p.add_argument(
            "--draft-recipe",
            metavar="FILE",
            help="JSON whose keys override the draft recipe (config_cpu.json)",
        )
        p.add_argument("-d", type=int, metavar="N", help="draft length (draft_predict_length)")

    bench = sub.add_parser("bench", help="measure speculative against plain decoding")
    bench.add_argument("--target", required=True, metavar="DIR")
    bench.add_argument("--draft", required=True, metavar="DIR")
    engine_args(bench)
    bench.add_argument("--tokens", type=int, default=128, metavar="N", help="tokens per run")
    bench.add_argument("--runs", type=int, default=3, metavar="N", help="measured run pairs")
    group = bench.add_mutually_exclusive_group()
    group.add_argument("--prompt", metavar="TEXT")
    group.add_argument("--prompt-file", metavar="F")
    bench.add_argument("--json", action="store_true", help="print the stable JSON result")
    bench.add_argument(
        "--force",
        action="store_true",
        help="measure a pair that cannot gain on this MNN (marked cannot_pay)",
    )
    bench.set_defaults(func=_cmd_bench)

    gen = sub.add_parser("generate", help="generate text with a target (and a draft)")
    gen.add_argument("--target", required=True, metavar="DIR")
    gen.add_argument("--draft", metavar="DIR")
    engine_args(gen)
    gen.add_argument("--prompt", required=True, metavar="TEXT")
    gen.add_argument("--max-tokens", type=int, default=256, metavar="N")
    gen.add_argument("--plain", action="store_true", help="plain decoding even with a draft")
    gen.add_argument("--raw", action="store_true", help="no chat template")
    gen.add_argument("--json", action="store_true", help="print text and statistics as JSON")
    gen.set_defaults(func=_cmd_generate)
    return parser


def never_fail_on_text() -> None:
    """Print what the stream's encoding cannot hold as escapes instead of failing.

    Windows gives a redirected stdout the ANSI code page (cp1252 for José), which holds
    no CJK: `draftdeck info` on a pack under 模型 would die with UnicodeEncodeError.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # None in a windowed app
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None, open_window: Callable[[], int] | None = None) -> int:
    """Run a command. `open_window` opens the GUI (for `gui` and no command): the
    executable's entry point passes it, so the command line never imports Qt itself."""
    argv = list(sys.argv[1:] if argv is None else argv)
    never_fail_on_text()
    args = build_parser().parse_args(argv)
    func = getattr(args, "func", None)
    if func is None or func is _cmd_gui:
        if open_window is None:
            print(
                "draftdeck: this entry point has no window; use `draftdeck` itself", file=sys.stderr
            )
            return 2
        return open_window()
    try:
        return int(func(args))
    except (FileError, CodedError) as exc:
        print(f"draftdeck: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
