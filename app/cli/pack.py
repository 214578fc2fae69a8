"""`draftdeck info` and `draftdeck check`: a pack, and whether a draft serves a target."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.export_check import SavedExportCheck, read_export_check


def _print_info(info: BundleInfo, check: SavedExportCheck | None) -> None:
    tok = info.tokenizer
    rows = [
        ("Pack", info.name),
        ("Path", str(info.path)),
        ("Role", info.role),
        ("Model type", info.family_words),
        ("Attention", info.attention + (" + LinearAttention ops" if info.linear_attention else "")),
        ("Hidden size", str(info.hidden_size)),
        ("Layers", str(info.layers)),
        ("Vocabulary", str(info.vocab_size) if info.vocab_size is not None else "unknown"),
        ("Quantization", info.quantization),
        ("Context window", info.context.describe()),
        ("Tokenizer", f"{tok.file} ({tok.type}), sha256 {tok.sha256[:12]}"),
        ("Special ids", " ".join(map(str, tok.special_ids)) or "-"),
        (
            "Stop ids",
            ", ".join(f"{s.id} {s.text or '?'} ({', '.join(s.sources)})" for s in tok.stop_tokens)
            or "-",
        ),
        (
            "Chat template",
            f"{info.chat.source}, sha256 {info.chat.sha256[:12]}"
            + (f"; {info.chat.problem}" if info.chat.problem else ""),
        ),
        *_turn_marker_rows(info),
        ("Visual", "yes" if info.visual else "no"),
        ("Recipes", ", ".join(info.recipe_files) or "none"),
        ("Size", format_bytes(info.size_bytes)),
        *info.export_format.rows(),
        ("Export check", check.words() if check else "none (not checked against its source)"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def _turn_marker_rows(info: BundleInfo) -> list[tuple[str, str]]:
    bare = info.turn_markers
    if bare is None:
        return []
    command = bare.command(info.path)
    return [("Turn markers", bare.message)] + ([("Apply it", command)] if command else [])


def cmd_info(args: argparse.Namespace) -> int:
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
    check = read_export_check(info.path)
    if args.json:
        print(
            json.dumps(
                {**info.to_json(), "export_check": check.to_json() if check else None}, indent=2
            )
        )
    else:
        _print_info(info, check)
    return 0


def _report_unreadable(errors: dict[str, FileError], as_json: bool) -> int:
    """A bundle that cannot be read is an error (exit 2), not a "Blocked" verdict: the
    pair was never judged, and a mistyped path must not read as an incompatible pair."""
    if as_json:
        listed = [
            {"side": side, "code": exc.code, "file": str(exc.path), "message": exc.problem}
            for side, exc in errors.items()
        ]
        print(json.dumps({"errors": listed}, indent=2))
    for side, exc in errors.items():
        print(f"draftdeck: cannot read the {side}: {exc}", file=sys.stderr)
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    from app.core.measure.pair_cost import with_measured_cost
    from app.core.pack.compat import assess_either, read_either
    from app.core.pack.verdict import BLOCKED
    from app.core.recipe.wording import reason_text

    sides = {"target": read_either(Path(args.target)), "draft": read_either(Path(args.draft))}
    errors = {side: value for side, value in sides.items() if isinstance(value, FileError)}
    if errors:
        return _report_unreadable(errors, args.json)
    # The c measured when the pair ran here (Tune, bench) in the estimate's place.
    verdict = with_measured_cost(
        assess_either(sides["target"], sides["draft"]), Path(args.target), Path(args.draft)
    )
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
            evidence = (
                f"  [target: {reason.shown(reason.target)}; draft: {reason.shown(reason.draft)}]"
            )
        print(f"  {marks[reason.severity]:<8} {reason_text(reason)}{evidence}")
    return code


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    info = sub.add_parser(
        "info",
        help="describe an MNN bundle folder",
        description="Describe an MNN bundle folder from its files, loading no weights: "
        "family, attention, shape, vocabulary, quantization, tokenizer, chat template, "
        "recipes, export format and check. Exit 1 on a broken bundle (the message names "
        "the file and the problem).",
    )
    info.add_argument("pack", metavar="PACK_DIR", help="the pack (bundle) folder")
    info.add_argument("--json", action="store_true", help="print the stable JSON description")
    info.set_defaults(func=cmd_info)

    check = sub.add_parser(
        "check",
        help="can this draft serve this target? (exit 0 ok, 1 blocked, 2 a bundle cannot be read)",
        description="Say whether a draft can serve a target and why not: vocabulary, family, "
        "attention kind, tokenizer ids, chat template, what a draft step costs beside a "
        "target step (c: estimated from the bytes of weights each reads per token, or as "
        "measured on this computer once Tune or bench ran the pair), and the pack's own "
        "advice from its runtime_config.json. Exit 0 compatible (warnings allowed, or "
        "speculation cannot pay), 1 blocked, 2 a bundle cannot be read.",
    )
    check.add_argument("target", metavar="TARGET", help="the target's pack folder")
    check.add_argument("draft", metavar="DRAFT", help="the draft's pack folder")
    check.add_argument("--json", action="store_true", help="print the stable JSON verdict")
    check.set_defaults(func=cmd_check)
