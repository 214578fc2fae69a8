"""Write docs/guide/cli-reference.md from the command's own parsers: every command, its
description and each argument's help, so the user guide cannot drift from `--help`.

    python scripts/cli_reference.py           # rewrite the page
    python scripts/cli_reference.py --check   # exit 1 when the page is not current

Rendered from the parsers' fields rather than argparse's help text, whose layout changes
between Python versions (tests/project/test_cli_reference.py compares on any of them).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PAGE = ROOT / "docs" / "guide" / "cli-reference.md"

from app.cli.main import build_parser  # noqa: E402

HEADER = """\
# Command-line reference

Every command and option, as `draftdeck COMMAND --help` gives them (written by
`scripts/cli_reference.py`; do not edit by hand). [Command line](cli.md) shows them at work
and describes their JSON output.
"""


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*words, name), sub
                yield from _commands(sub, (*words, name))


def _text(words: str) -> str:
    """Help text as Markdown: a `*` or `<` that would read as emphasis or HTML kept as typed
    (intraword underscores and `code` read as typed already)."""
    return re.sub(r"([\\*<])", r"\\\1", " ".join(words.split()))


def _name(action: argparse.Action) -> str:
    if isinstance(action.metavar, tuple):  # nargs=3 with a name for each
        shown = " ".join(action.metavar)
    elif action.metavar is not None:
        shown = str(action.metavar)
    elif action.choices is not None:
        shown = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        shown = action.dest.upper()
    if not action.option_strings:
        return shown
    takes = action.nargs != 0
    return ", ".join(f"{o} {shown}" if takes else o for o in action.option_strings)


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    expand = argparse.HelpFormatter(parser.prog)._expand_help  # fills in %(default)s
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        required = " (required)" if action.required and action.option_strings else ""
        rows.append(f"- `{_name(action)}`{required}: {_text(expand(action))}")
    return rows


def render() -> str:
    parts = [HEADER]
    for words, parser in _commands(build_parser()):
        parts.append(f"## draftdeck {' '.join(words)}\n")
        parts.append(_text(parser.description or "") + "\n")
        rows = _arguments(parser)
        if rows:
            parts.append("\n".join(rows) + "\n")
        if parser.epilog:
            parts.append(_text(parser.epilog) + "\n")
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args()
    text = render()
    current = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == text
    if args.check:
        print(f"{PAGE.relative_to(ROOT)} is {'current' if current else 'out of date'}")
        return 0 if current else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
