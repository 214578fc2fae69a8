"""The `draftdeck` command: the GUI with no arguments, headless commands otherwise.

Each command group's parser and commands live in their own module of app.cli; this one
assembles the parser and dispatches."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from app import __version__
from app.core.infra.errors import CodedError, FileError, UsageError
from app.core.infra.logsetup import setup_logging

log = logging.getLogger("draftdeck.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draftdeck",
        description="Speculative decoding workbench for MNN draft packs. "
        "Without a command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"draftdeck {__version__}")
    sub = parser.add_subparsers(
        dest="command",
        metavar="COMMAND",
        help="one of these (`draftdeck COMMAND --help` tells more)",
    )
    sub.add_parser(
        "gui",
        help="open the window (the default)",
        description="Open DraftDeck's window, as running draftdeck without a command does.",
    )  # no func: main() opens it

    from app.cli.export import add_parsers as add_export_parsers
    from app.cli.forecast import add_parsers as add_forecast_parsers
    from app.cli.hub import add_parsers as add_hub_parsers
    from app.cli.pack import add_parsers as add_pack_parsers
    from app.cli.packmaking import add_parsers as add_packmaking_parsers
    from app.cli.phone import add_parsers as add_phone_parsers
    from app.cli.recipe import add_parser as add_recipe_parser
    from app.cli.run import add_parsers as add_run_parsers
    from app.cli.tune import add_parser as add_tune_parser
    from app.cli.verify_export import add_parser as add_verify_export_parser

    add_pack_parsers(sub)
    add_recipe_parser(sub)
    add_hub_parsers(sub)
    add_tune_parser(sub)
    add_phone_parsers(sub)
    add_run_parsers(sub)
    add_packmaking_parsers(sub)
    add_verify_export_parser(sub)
    add_export_parsers(sub)
    add_forecast_parsers(sub)
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


class _TerminalLine(logging.Handler):
    """Warnings as one `draftdeck: ...` line on stderr; tracebacks go only to the log file.

    Without a handler, Python's last-resort one prints every logged traceback (a settings
    file that cannot be set aside, say) on the terminal."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        # sys.stderr looked up each time: it may have been replaced since (tests, pythonw).
        if sys.stderr is not None:
            print(f"draftdeck: {record.getMessage()}", file=sys.stderr)


@contextmanager
def _logging_for_the_command() -> Iterator[None]:
    """The log file and the terminal line while a command runs, removed after it (an
    in-process caller such as a test keeps its own logging)."""
    logger = logging.getLogger("draftdeck")
    before, level = list(logger.handlers), logger.level
    logger.addHandler(_TerminalLine())
    if not any(isinstance(h, logging.FileHandler) for h in before):  # else keep the caller's
        setup_logging()  # None when the log folder cannot be made: the terminal line remains
    try:
        yield
    finally:
        for added in [h for h in logger.handlers if h not in before]:
            logger.removeHandler(added)
            added.close()
        logger.setLevel(level)


def _os_error_line(command: str, exc: OSError) -> str:
    """`<what failed>: <path>: <reason>`; the path is left out when the OS gave none."""
    parts = [f"{command} failed"]
    if exc.filename is not None:
        path = str(exc.filename)
        if exc.filename2 is not None:
            path += f" -> {exc.filename2}"
        parts.append(path)
    parts.append(exc.strerror or str(exc))
    return ": ".join(parts)


def main(argv: Sequence[str] | None = None, open_window: Callable[[], int] | None = None) -> int:
    """Run a command. `open_window` opens the GUI (for `gui` and no command): the
    executable's entry point passes it, so the command line never imports Qt itself."""
    argv = list(sys.argv[1:] if argv is None else argv)
    never_fail_on_text()
    args = build_parser().parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:  # `gui`, or no command
        if open_window is None:
            print(
                "draftdeck: this entry point has no window; use `draftdeck` itself", file=sys.stderr
            )
            return 2
        return open_window()
    with _logging_for_the_command():
        try:
            return int(func(args))
        except UsageError as exc:
            print(f"draftdeck: {exc}", file=sys.stderr)
            return 2
        except (FileError, CodedError) as exc:
            print(f"draftdeck: {exc}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            # The reader went away (`draftdeck catalog | head -1`): nothing to tell it.
            # Point stdout at nothing so the interpreter's final flush cannot fail.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141 if os.name == "posix" else 1
        except OSError as exc:
            # Not foreseen by the command (a read-only home, a full disk): one line here,
            # the traceback in the log file for a bug report.
            log.error("%s", _os_error_line(args.command, exc), exc_info=True)
            return 1
        except KeyboardInterrupt:
            print("draftdeck: interrupted", file=sys.stderr)
            return 130


if __name__ == "__main__":
    sys.exit(main())
