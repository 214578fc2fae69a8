"""The `draftdeck` executable: the window with no command, a headless command
otherwise, and a frozen build's self-test. It sits above the layers: the command line
and the window never import each other."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app.cli.main import main as cli_main
from app.cli.main import never_fail_on_text


def open_window() -> int:
    from app.ui.shell.application import run_gui  # Qt is imported only for the GUI

    return run_gui()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--self-test"]:  # a build checking itself, headless
        never_fail_on_text()
        from app.self_test import run_self_test

        return run_self_test()
    return cli_main(argv, open_window=open_window)
