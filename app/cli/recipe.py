"""`draftdeck recipe show | set | validate`: the recipe editor without a window."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.pack.files import DRAFT_RECIPE, DRAFT_RECIPE_ALT
from app.core.recipe.files import TARGET_CONFIG, RecipeDocument, parse_value
from app.core.recipe.schema import DRAFT, ERROR, FIELDS, TARGET, Problem, recipe_problems


def scope_of(path: Path) -> str:
    return DRAFT if path.name in (DRAFT_RECIPE, DRAFT_RECIPE_ALT) else TARGET


def check(path: Path, data: dict[str, Any]) -> list[Problem]:
    return recipe_problems(data, scope_of(path), path.parent)


def _describe(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"file": str(path), "exists": False, "values": {}, "problems": []}
    doc = RecipeDocument.load(path)
    return {
        "file": str(path),
        "exists": True,
        "values": doc.data,
        "unknown_keys": [k for k in doc.data if k not in FIELDS],
        "problems": [
            {"key": p.key, "severity": p.severity, "message": p.message}
            for p in check(path, doc.data)
        ],
    }


def cmd_show(args: argparse.Namespace) -> int:
    pack = Path(args.pack)
    result: dict[str, Any] = {
        "pack": str(pack),
        "draft_recipe": _describe(pack / DRAFT_RECIPE),
        "target_config": _describe(pack / TARGET_CONFIG),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for title, part in (
        ("Draft recipe", result["draft_recipe"]),
        ("Target settings", result["target_config"]),
    ):
        print(f"{title} ({part['file']})")
        if not part["exists"]:
            print("  (none)")
            continue
        for key, value in part["values"].items():
            field = FIELDS.get(key)
            shown = json.dumps(value)
            if field is None:
                print(f"  {key} = {shown}  (not a DraftDeck key; passed to MNN as is)")
            elif value != field.default:
                print(f"  {key} = {shown}  (MNN default {json.dumps(field.default)})")
            else:
                print(f"  {key} = {shown}")
        for problem in part["problems"]:
            print(f"  {problem['severity']}: {problem['key']}: {problem['message']}")
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    pack = Path(args.pack)
    if not pack.is_dir():
        print(f"draftdeck: {pack}: no such pack folder; nothing was saved", file=sys.stderr)
        return 1
    path = pack / (TARGET_CONFIG if args.target_config else DRAFT_RECIPE)
    doc = RecipeDocument.open_or_new(path)
    data = dict(doc.data)
    for assignment in args.assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key:
            print(f"draftdeck: {assignment!r} is not KEY=VALUE", file=sys.stderr)
            return 2
        data[key] = parse_value(value)
    errors = [p for p in check(path, data) if p.severity == ERROR]
    if errors:
        for problem in errors:
            print(f"draftdeck: {path}: {problem}", file=sys.stderr)
        print("draftdeck: nothing was saved", file=sys.stderr)
        return 1
    doc.save(data)
    for problem in check(path, data):
        print(f"warning: {problem}", file=sys.stderr)
    print(f"saved {path}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        data = RecipeDocument.load(path).data
    except FileError as exc:
        print(f"{exc}", file=sys.stderr)
        return 1
    problems = check(path, data)
    for problem in problems:
        print(f"{path}: {problem.severity}: {problem}")
    errors = [p for p in problems if p.severity == ERROR]
    if not errors:
        print(f"{path}: valid" + (f" ({len(problems)} warnings)" if problems else ""))
    return 1 if errors else 0


def add_parser(sub: Any) -> None:
    recipe = sub.add_parser("recipe", help="show, change or check a pack's recipe")
    verbs = recipe.add_subparsers(dest="verb", metavar="VERB", required=True)
    show = verbs.add_parser("show", help="the draft recipe and target settings of a pack")
    show.add_argument("pack", metavar="PACK")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show)
    change = verbs.add_parser(
        "set", help="change keys of config_cpu.json (or config.json with --target-config)"
    )
    change.add_argument("pack", metavar="PACK")
    change.add_argument(
        "assignments",
        nargs="+",
        metavar="KEY=VALUE",
        help="values are JSON where they parse, else strings",
    )
    change.add_argument(
        "--target-config",
        action="store_true",
        help="edit the pack's config.json instead of config_cpu.json",
    )
    change.set_defaults(func=cmd_set)
    check_file = verbs.add_parser("validate", help="check a recipe file (exit 1 on problems)")
    check_file.add_argument("file", metavar="FILE")
    check_file.set_defaults(func=cmd_validate)
