"""`draftdeck recipe show | set | validate | move-to-computer`: the recipe editor without a
window. The pack's recipes are the phone's; this computer's settings for the pack
(`.draftdeck-this-computer.json`, recipe/desktop_settings.py) are shown beside them, set
with `recipe set --this-computer`, and `move-to-computer` takes desktop values an earlier
DraftDeck wrote into the recipes out of them (recipe/desktop_move.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.pack.bundle import read_bundle
from app.core.recipe.desktop_move import move_to_computer
from app.core.recipe.desktop_settings import (
    DESKTOP_KEYS,
    THIS_COMPUTER_FILE,
    read_desktop,
    settings_path,
    update_desktop,
)
from app.core.recipe.draft_recipes import (
    DIFFER,
    DRAFT_RECIPE_NAMES,
    SAME,
    DraftRecipes,
    draft_recipes,
    save_all,
)
from app.core.recipe.files import TARGET_CONFIG, RecipeDocument, draft_recipe_path, parse_value
from app.core.recipe.save_lock import saving
from app.core.recipe.schema import DRAFT, ERROR, FIELDS, TARGET, Problem, recipe_problems

PACK_HELP = "the pack folder"
# config.json titled by the pack's role: it holds the pack's own settings, whichever
# side the pack runs as (a draft pack's are the draft's, not a target's).
CONFIG_TITLES = {"draft": "Draft settings", "target": "Target settings", "either": "Model settings"}


def scope_of(path: Path) -> str:
    return DRAFT if path.name in DRAFT_RECIPE_NAMES else TARGET


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


def _two_recipes(recipes: DraftRecipes) -> dict[str, Any]:
    return {
        "used": str(recipes.used),
        "other": None if recipes.other is None else str(recipes.other),
        "state": recipes.state,
        "rule": recipes.rule_text(),
        "differences": [
            {
                "key": d.key,
                "used": d.used,
                "other": d.other,
                "in_used": d.in_used,
                "in_other": d.in_other,
            }
            for d in recipes.differences
        ],
        "unreadable": recipes.unreadable,
        "diff": recipes.diff,
    }


def _print_difference(recipes: DraftRecipes) -> None:
    """The diff of two draft recipes that differ, and how to choose."""
    if recipes.state != DIFFER or recipes.other is None:
        return
    for line in recipes.diff.splitlines():
        print(f"  {line}")
    print(
        f"  Make them the same on the Recipes page, or change one by name: "
        f"`draftdeck recipe set PACK KEY=VALUE --file {recipes.used.name}` (or "
        f"--file {recipes.other.name}, or --both)."
    )


def _role(pack: Path) -> str | None:
    """The pack's role as the Library reads it (None: the pack cannot be read)."""
    try:
        return read_bundle(pack).role
    except FileError:
        return None


def cmd_show(args: argparse.Namespace) -> int:
    pack = Path(args.pack)
    recipes = draft_recipes(pack)
    role = _role(pack)
    result: dict[str, Any] = {
        "pack": str(pack),
        "role": role,
        "draft_recipe": _describe(recipes.used),
        "draft_recipes": _two_recipes(recipes),
        "target_config": _describe(pack / TARGET_CONFIG),
        "this_computer": _this_computer(pack),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(recipes.rule_text())
    _print_difference(recipes)
    for title, part in (
        ("Draft recipe", result["draft_recipe"]),
        (CONFIG_TITLES.get(role or "", "Settings"), result["target_config"]),
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
    _print_this_computer(result["this_computer"])
    return 0


def _this_computer(pack: Path) -> dict[str, Any]:
    """This computer's settings for the pack, or why they cannot be used."""
    try:
        settings = read_desktop(pack)
    except FileError as exc:
        return {"file": str(settings_path(pack)), "values": {}, "problem": exc.problem}
    return {"file": str(settings_path(pack)), "values": dict(settings.to_json()), "problem": None}


def _print_this_computer(part: dict[str, Any]) -> None:
    print(
        f"On this computer ({part['file']}: applied over the recipes above when DraftDeck "
        "runs the pack here; never pushed to a phone nor published)"
    )
    if part["problem"]:
        print(f"  error: {part['problem']} (the pack runs as its recipes say until fixed)")
        return
    files = {k: v for k, v in part["values"].items() if k != "version"}
    if not files:
        print("  (none: the pack runs here as its recipes say)")
    for name, keys in files.items():
        for key, value in keys.items():
            print(f"  {name}: {key} = {json.dumps(value)}")


def _files_to_set(args: argparse.Namespace, pack: Path) -> list[Path] | str:
    """The recipe files `recipe set` writes, or why it refuses to choose."""
    if args.target_config:
        if args.file or args.both:
            return "--file and --both choose among draft recipes, not with --target-config"
        return [pack / TARGET_CONFIG]
    recipes = draft_recipes(pack)
    if args.file:
        return [pack / args.file]
    if args.both:  # the ones the pack has: --both never creates a second recipe
        return [pack / n for n in DRAFT_RECIPE_NAMES if (pack / n).is_file()] or [recipes.used]
    if recipes.state == DIFFER and recipes.other is not None:
        return (
            f"{pack} has two draft recipes that differ: {recipes.used.name} (which "
            f"DraftDeck runs) and {recipes.other.name}: {recipes.summary()}. Say which to "
            f"change with --file {recipes.used.name} or --file {recipes.other.name}, or "
            "set the keys in both with --both"
        )
    return recipes.in_step()


def cmd_set(args: argparse.Namespace) -> int:
    pack = Path(args.pack)
    if not pack.is_dir():
        print(f"draftdeck: {pack}: no such pack folder; nothing was saved", file=sys.stderr)
        return 1
    assignments: dict[str, Any] = {}
    for assignment in args.assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key:
            print(f"draftdeck: {assignment!r} is not KEY=VALUE", file=sys.stderr)
            return 2
        assignments[key] = parse_value(value)
    if args.this_computer:
        name = TARGET_CONFIG if args.target_config else args.file or draft_recipe_path(pack).name
        return _set_this_computer(pack, name, assignments)
    paths = _files_to_set(args, pack)
    if isinstance(paths, str):
        print(f"draftdeck: {paths}; nothing was saved", file=sys.stderr)
        return 1
    saves = []
    # Read, set and written as one step: a save elsewhere (the window) waits, and is
    # not written over unseen.
    with saving(*paths):
        for path in paths:
            doc = RecipeDocument.open_or_new(path)
            data = {**doc.data, **assignments}
            errors = [p for p in check(path, data) if p.severity == ERROR]
            if errors:
                for problem in errors:
                    print(f"draftdeck: {path}: {problem}", file=sys.stderr)
                print("draftdeck: nothing was saved", file=sys.stderr)
                return 1
            saves.append((doc, data))
        save_all(saves)
    for path, (_, data) in zip(paths, saves, strict=True):
        for problem in check(path, data):
            print(f"warning: {problem}", file=sys.stderr)
        print(f"saved {path}")
    if not args.target_config:
        after = draft_recipes(pack)
        if after.state == DIFFER and after.other is not None:
            print(f"warning: {after.rule_text()}", file=sys.stderr)
    return 0


def _set_this_computer(pack: Path, name: str, assignments: dict[str, Any]) -> int:
    """`recipe set --this-computer`: the keys go to this computer's settings over the
    recipe file `name` (null takes one out); the pack's recipes are not touched."""
    try:
        update_desktop(pack, name, assignments)
    except FileError as exc:
        print(f"draftdeck: {exc}; nothing was saved", file=sys.stderr)
        return 1
    print(f"saved {settings_path(pack)} (this computer's settings over {name})")
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    """`recipe move-to-computer`: desktop values out of the pack's recipes."""
    pack = Path(args.pack)
    if not pack.is_dir():
        print(f"draftdeck: {pack}: no such pack folder; nothing was changed", file=sys.stderr)
        return 1
    try:
        found, _ = move_to_computer(pack)
    except FileError as exc:
        print(f"draftdeck: {exc}; nothing was changed", file=sys.stderr)
        return 1
    moves = found.all
    if args.json:
        listed = [
            {
                "file": m.recipe,
                "key": m.key,
                "value": m.value,
                "shipped": m.shipped,
                "kept_here": m.kept_here,
            }
            for m in moves
        ]
        print(json.dumps({"pack": str(pack), "moved": listed}, indent=2))
        return 0
    if not moves:
        print(f"{pack}: no desktop values in its recipes; nothing to move")
        return 0
    for move in moves:
        print(f"  {move.text()}")
    print(f"moved {len(moves)} value(s) to {settings_path(pack)}; the recipes are the phone's")
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
    warnings = len(problems)
    recipes = draft_recipes(path.parent) if path.name in DRAFT_RECIPE_NAMES else None
    if recipes is not None and recipes.other is not None:
        twin = recipes.other if recipes.used.samefile(path) else recipes.used
        if recipes.state == SAME:
            print(f"{path}: the same recipe as {twin.name}")
        else:  # a warning: each file can be valid on its own
            warnings += 1
            print(f"{path}: warning: {recipes.rule_text()}")
            _print_difference(recipes)
    errors = [p for p in problems if p.severity == ERROR]
    if not errors:
        plural = "s" if warnings > 1 else ""
        print(f"{path}: valid" + (f" ({warnings} warning{plural})" if warnings else ""))
    return 1 if errors else 0


def add_parser(sub: Any) -> None:
    recipe = sub.add_parser(
        "recipe",
        help="show, change or check a pack's recipe",
        description="Show, change or check a pack's recipes: the draft recipe "
        "(config_cpu.json, and draft_config_cpu.json when the pack has it) and the "
        "target's run settings (config.json).",
    )
    verbs = recipe.add_subparsers(
        dest="verb", metavar="VERB", required=True, help="what to do with the recipe"
    )
    show = verbs.add_parser(
        "show",
        help="the draft recipe and target settings of a pack",
        description="Print the pack's draft recipe and target settings, which draft recipe "
        "the engine runs, and the diff when the two draft recipes differ.",
    )
    show.add_argument("pack", metavar="PACK", help=PACK_HELP)
    show.add_argument("--json", action="store_true", help="print the recipes as JSON")
    show.set_defaults(func=cmd_show)
    change = verbs.add_parser(
        "set",
        help="change keys of the draft recipe (both draft recipes when they are the same; "
        "config.json with --target-config)",
        description="Change keys of the draft recipe (both draft recipes when they are the "
        "same; config.json with --target-config), saved atomically with the previous file "
        "kept as .bak. Refused, changing nothing, when a value is invalid or the pack's two "
        "draft recipes differ and neither --file nor --both says which to change.",
    )
    change.add_argument("pack", metavar="PACK", help=PACK_HELP)
    change.add_argument(
        "assignments",
        nargs="+",
        metavar="KEY=VALUE",
        help="values are JSON where they parse, else strings",
    )
    change.add_argument(
        "--target-config",
        action="store_true",
        help="edit the pack's config.json instead of the draft recipe",
    )
    which = change.add_mutually_exclusive_group()
    which.add_argument(
        "--file",
        choices=DRAFT_RECIPE_NAMES,
        help="change only this draft recipe (needed when the pack's two differ)",
    )
    which.add_argument(
        "--both",
        action="store_true",
        help="set the keys in both draft recipes (each keeps its other keys)",
    )
    change.add_argument(
        "--this-computer",
        action="store_true",
        help=f"set the keys in this computer's settings for the pack ({THIS_COMPUTER_FILE}), "
        "over the recipe file they would go to, instead of the recipe: what DraftDeck runs "
        "here, never pushed to a phone; only " + ", ".join(DESKTOP_KEYS) + " (null takes "
        "one out)",
    )
    change.set_defaults(func=cmd_set)
    move = verbs.add_parser(
        "move-to-computer",
        help="move desktop values out of the pack's recipes into this computer's settings",
        description="Move the desktop values out of the pack's recipes (the files a phone "
        "reads): backend_type, thread_num, precision and memory where they differ from what "
        "the pack shipped, and memory normal always, go to this computer's settings for the "
        f"pack ({THIS_COMPUTER_FILE}); the recipes get the shipped values back (or lose the "
        "key when the pack had none). What runs here stays the same.",
    )
    move.add_argument("pack", metavar="PACK", help=PACK_HELP)
    move.add_argument("--json", action="store_true", help="print what was moved as JSON")
    move.set_defaults(func=cmd_move)
    check_file = verbs.add_parser(
        "validate",
        help="check a recipe file (exit 1 on problems)",
        description="Check a recipe file against MNN's keys and types; exit 1 with every "
        "problem listed (key, or JSON line and column).",
    )
    check_file.add_argument("file", metavar="FILE", help="a recipe JSON file")
    check_file.set_defaults(func=cmd_validate)
