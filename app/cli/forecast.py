"""`draftdeck forecast` and `draftdeck phone-result`: what a pair will do on a phone, and
the phone results the forecast learns from."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli.arg_types import number, whole_number
from app.core.infra.errors import FileError, UsageError
from app.core.infra.jsonfile import read_named_text
from app.core.measure import phone_profiles
from app.core.measure.pair_acceptance import (
    PositionTallies,
    add_position_tallies,
    forget_tallies,
    read_tallies,
)
from app.core.measure.phone_forecast import (
    NoForecast,
    PhoneForecast,
    forecast,
    pair_forecast,
    pair_sizes,
    record_result,
)
from app.core.measure.phone_results import PhoneResult, delete_result, list_results

MEASURE_LENGTH = 6  # acceptance is measured at the longest forecast length
# Built-in prompts: prose, code and questions, as the packs' authors measure on.
PROMPTS = (
    "Write a short, friendly explanation of how a bicycle gear system works, then list "
    "three tips for riding up hills.",
    "Write a Python function that returns the n-th Fibonacci number, with a docstring and "
    "two tests.",
    "What causes the seasons on Earth? Answer in a few sentences.",
    "Tell a short story about a lighthouse keeper who finds a message in a bottle.",
)
TOKEN_LIMIT = 4096


def _check_pack(path: str, what: str) -> Path:
    folder = Path(path)
    if not folder.is_dir():
        raise FileError(folder, f"the {what} pack folder does not exist")
    return folder


def _prompts(args: argparse.Namespace) -> tuple[str, ...]:
    if args.prompt_file:
        return (read_named_text(Path(args.prompt_file)),)
    if args.prompt:
        return (args.prompt,)
    return PROMPTS


def measure_tallies(
    target: Path, draft: Path, prompts: tuple[str, ...], tokens: int, replace: bool = False
) -> PositionTallies | None:
    """Measure greedy acceptance by position here with the real engine (fixed drafting
    at d = 6, the pack's recipes as DraftDeck runs them here) and store it: added to
    the pair's counts, or in their place when `replace` (only once the measurement is
    done: a failed one keeps the old counts)."""
    from app.core.recipe.drafting_settings import FIXED_DRAFTING
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import Generate, Load, Mode, Reset

    measured: PositionTallies | None = None
    # Counts, not times: no measurement lock is needed, a load elsewhere changes nothing.
    with EngineClient() as client:
        loaded = client.load(
            Load(target=str(target), draft=str(draft), draft_length=MEASURE_LENGTH)
        )
        for i, prompt in enumerate(prompts, 1):
            print(f"measuring acceptance here: prompt {i}/{len(prompts)}", file=sys.stderr)
            client.run(Reset())
            done = client.run(
                Generate(
                    prompt=prompt,
                    max_tokens=tokens,
                    mode=Mode.SPECULATIVE,
                    drafting=FIXED_DRAFTING,
                )
            )
            one = PositionTallies.from_stats(done.stats, exact=loaded.lossless_expected)
            measured = measured.merged(one) if measured else one
    if measured is None or not measured.rates:
        return None
    if replace:
        forget_tallies(target, draft)
    add_position_tallies(target, draft, measured)
    return read_tallies(target, draft)


def _given_results(args: argparse.Namespace) -> list[tuple[float, float, int]]:
    """The --phone-result triples, checked as the parser checks numbers."""
    tok_s, length = number(0.0, above_minimum=True), whole_number(1, 16)
    return [(tok_s(plain), tok_s(spec), length(d)) for plain, spec, d in args.phone_result or []]


def cmd_forecast(args: argparse.Namespace) -> int:
    target, draft = _check_pack(args.target, "target"), _check_pack(args.draft, "draft")
    try:
        given = _given_results(args)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--phone-result: {exc}") from None
    device = args.device or (None if given else phone_profiles.chosen_device())
    if not given and device is None:
        raise UsageError(
            "say which phone: --device NAME or --phone-result PLAIN SPEC D; known: "
            + "; ".join(phone_profiles.device_names())
        )
    if device is not None and not given:
        named = phone_profiles.named_device(device)
        if named is None or phone_profiles.profile_for(named) is None:
            raise UsageError(
                f"no phone profile named {device!r}; known: "
                + "; ".join(phone_profiles.device_names())
            )
        device = named
    tallies = None if args.measure else read_tallies(target, draft)
    measured_now = tallies is None
    if tallies is None:
        tallies = measure_tallies(target, draft, _prompts(args), args.tokens, args.measure)
    if tallies is None or not tallies.rates:
        print(
            "draftdeck: no draft token was checked while measuring; no forecast",
            file=sys.stderr,
        )
        return 1
    if given:
        profile = phone_profiles.given_results_profile(target, draft, given, device or "the phone")
        made: PhoneForecast | NoForecast = forecast(profile, pair_sizes(target, draft), tallies)
    else:
        assert device is not None
        made = pair_forecast(target, draft, device, tallies)
    if isinstance(made, NoForecast):
        print(f"draftdeck: {made.reason}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(_forecast_json(made, target, draft, tallies, measured_now), indent=2))
    else:
        _print_forecast(made, target, draft, tallies, measured_now)
    return 0


def _forecast_json(
    made: PhoneForecast, target: Path, draft: Path, tallies: PositionTallies, measured_now: bool
) -> dict[str, Any]:
    return {
        "target": str(target),
        "draft": str(draft),
        **made.to_json(),
        "acceptance": {
            **tallies.to_json(),
            "by_position": list(tallies.rates),
            "measured_now": measured_now,
        },
    }


def _pct(x: float) -> str:
    return f"{x * 100:+.0f} %"


def _print_forecast(
    made: PhoneForecast, target: Path, draft: Path, tallies: PositionTallies, measured_now: bool
) -> None:
    when = "measured now" if measured_now else "stored"
    print(f"Phone forecast: {target.name} + {draft.name} on {made.device}")
    rates = ", ".join(f"{p:.2f}" for p in tallies.rates)
    print(f"Acceptance by position on this computer ({when}, {tallies.tokens} tokens): {rates}")
    print()
    print(f"{'d':>2}  {'plain tok/s':>11}  {'spec tok/s':>10}  uplift (95 % interval)")
    for row in made.rows:
        mark = "  <- best" if row.draft_length == made.best_draft_length else ""
        print(
            f"{row.draft_length:>2}  {row.plain_tok_s:>11.2f}  {row.spec_tok_s:>10.2f}  "
            f"{_pct(row.uplift)} ({_pct(row.uplift_low)} to {_pct(row.uplift_high)}){mark}"
        )
    print()
    close = ""
    if len(made.close_lengths) > 1:
        close = " (within noise: d = " + ", ".join(map(str, made.close_lengths)) + ")"
    print(f"Best on the phone: d = {made.best_draft_length}{close}")
    print("Assumptions:")
    for words in made.assumptions:
        print(f"- {words}")


def cmd_result_add(args: argparse.Namespace) -> int:
    target, draft = _check_pack(args.target, "target"), _check_pack(args.draft, "draft")
    result = record_result(args.phone, target, draft, args.plain, args.spec, args.d)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(f"Recorded {result.id} on {result.phone}: {_result_line(result)}")
    return 0


def _result_line(r: PhoneResult) -> str:
    line = (
        f"{r.target.name} + {r.draft.name}, d={r.draft_length}: {r.plain_tok_s:g} -> "
        f"{r.spec_tok_s:g} tok/s ({_pct(r.uplift)})"
    )
    if r.forecast is not None and r.forecast_error is not None:
        line += (
            f"; forecast before it {r.forecast.spec_tok_s:.2f} tok/s "
            f"({_pct(r.forecast.uplift)}), off by {_pct(r.forecast_error)}"
        )
    else:
        line += "; no forecast before it"
    return line


def cmd_result_list(args: argparse.Namespace) -> int:
    results = list_results(args.phone)
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
        return 0
    if not results:
        print("No phone results recorded" + (f" on {args.phone}." if args.phone else "."))
        return 0
    for r in results:
        print(f"{r.id}  {r.date[:10]}  {r.phone}  {_result_line(r)}")
    return 0


def cmd_result_delete(args: argparse.Namespace) -> int:
    deleted = delete_result(args.id)
    if deleted is None:
        raise UsageError(f"no phone result with id {args.id!r} (`draftdeck phone-result list`)")
    print(f"Deleted {deleted.id} ({deleted.phone}: {_result_line(deleted)})")
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fc = sub.add_parser(
        "forecast",
        help="forecast a pair's tok/s and uplift on a phone, d = 1-6",
        description="Forecast plain and speculative tok/s on a phone and the uplift with its "
        "95 % interval for draft lengths 1-6, and the best length: from the acceptance by "
        "position measured on this computer (greedy; measured now with the real engine when "
        "none is stored for the pair) and a phone profile (results given here, results "
        "recorded with `draftdeck phone-result add`, or published figures). Each assumption "
        "is printed with it.",
    )
    fc.add_argument("--target", required=True, metavar="DIR", help="the target's pack folder")
    fc.add_argument("--draft", required=True, metavar="DIR", help="the draft's pack folder")
    fc.add_argument(
        "--phone-result",
        nargs=3,
        action="append",
        metavar=("PLAIN", "SPEC", "D"),
        help="a result from the phone: plain and speculative tok/s at draft length D, as "
        "TokForge shows them (repeat it; two lengths fit the verify cost too)",
    )
    fc.add_argument(
        "--device",
        metavar="NAME",
        help="a phone profile: a phone with recorded results (its model name) or a "
        "published one (default: the phone chosen in DraftDeck)",
    )
    fc.add_argument(
        "--measure",
        action="store_true",
        help="measure the acceptance here again (forgets the pair's stored counts)",
    )
    prompt = fc.add_mutually_exclusive_group()
    prompt.add_argument("--prompt", metavar="TEXT", help="measure on this prompt")
    prompt.add_argument("--prompt-file", metavar="F", help="measure on a UTF-8 file's prompt")
    fc.add_argument(
        "--tokens",
        type=whole_number(1, TOKEN_LIMIT),
        default=256,
        metavar="N",
        help="tokens per prompt when measuring (default %(default)s)",
    )
    fc.add_argument("--json", action="store_true", help="print the forecast as JSON")
    fc.set_defaults(func=cmd_forecast)

    pr = sub.add_parser(
        "phone-result",
        help="record, list or delete results measured on a phone",
        description="Results measured on a phone (plain and speculative tok/s and the draft "
        "length, as TokForge shows them), kept per phone; each keeps the forecast made "
        "just before it, so you see how far it was off. They make that phone's profile.",
    )
    actions = pr.add_subparsers(
        dest="action", metavar="ACTION", required=True, help="what to do with the results"
    )
    add = actions.add_parser("add", help="record a result", description="Record a result.")
    add.add_argument("--phone", required=True, metavar="MODEL", help="the phone's model name")
    add.add_argument("--target", required=True, metavar="DIR", help="the target's pack folder")
    add.add_argument("--draft", required=True, metavar="DIR", help="the draft's pack folder")
    add.add_argument(
        "plain", type=number(0.0, above_minimum=True), metavar="PLAIN", help="plain tok/s"
    )
    add.add_argument(
        "spec", type=number(0.0, above_minimum=True), metavar="SPEC", help="speculative tok/s"
    )
    add.add_argument("d", type=whole_number(1, 16), metavar="D", help="the draft length")
    add.add_argument("--json", action="store_true", help="print the result as JSON")
    add.set_defaults(func=cmd_result_add)
    ls = actions.add_parser("list", help="list results", description="List recorded results.")
    ls.add_argument("--phone", metavar="MODEL", help="only this phone's")
    ls.add_argument("--json", action="store_true", help="print them as JSON")
    ls.set_defaults(func=cmd_result_list)
    rm = actions.add_parser("delete", help="delete a result", description="Delete a result.")
    rm.add_argument("id", metavar="ID", help="the result's id (from `list`)")
    rm.set_defaults(func=cmd_result_delete)
