"""The `draftdeck` command: the GUI with no arguments, headless commands otherwise.

Each command group's parser and commands live in their own module of app.cli; this one
assembles the parser and dispatches."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from app import __version__
from app.core.infra.errors import CodedError, FileError


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

    from app.cli.hub import add_parsers as add_hub_parsers
    from app.cli.pack import add_parsers as add_pack_parsers
    from app.cli.phone import add_parsers as add_phone_parsers
    from app.cli.recipe import add_parser as add_recipe_parser
    from app.cli.run import add_parsers as add_run_parsers
    from app.cli.tune import add_parser as add_tune_parser

    add_pack_parsers(sub)
    add_recipe_parser(sub)
    add_hub_parsers(sub)
    add_tune_parser(sub)
    add_phone_parsers(sub)
    add_run_parsers(sub)
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
