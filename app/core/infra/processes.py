"""Starting other programs the same way on every OS."""

from __future__ import annotations

import subprocess
import sys


def no_window_flags() -> int:
    """`creationflags` for a console program started by DraftDeck (the engine worker, adb).

    On Windows a console program started from the windowed app would open a console
    window of its own; CREATE_NO_WINDOW runs it without one (its standard streams still
    work through the pipes we give it). 0 elsewhere, where the argument is ignored.
    """
    if sys.platform == "win32":
        return subprocess.CREATE_NO_WINDOW
    return 0
