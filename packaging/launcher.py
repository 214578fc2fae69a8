"""The frozen app's entry point: the same `draftdeck` command as `python -m app`.

In a frozen build there is no `python -m`: the engine worker is this executable run
with `--engine-worker`, handled here so that the command line never imports the
worker side.
"""

import multiprocessing
import os
import sys


def _restore_library_path() -> None:
    """PyInstaller's Linux bootloader points LD_LIBRARY_PATH at the bundled libraries
    (saving the user's value in LD_LIBRARY_PATH_ORIG). This process has loaded them
    already; programs it starts (the system's adb, xdg-open, the file manager) must get
    the user's value back, or they load our older libstdc++/glib and fail. The engine
    worker is this executable again, and its bootloader sets the path anew."""
    if getattr(sys, "frozen", False) and sys.platform.startswith("linux"):
        original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
        if original is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = original


if __name__ == "__main__":
    multiprocessing.freeze_support()
    _restore_library_path()
    if sys.argv[1:2] == ["--engine-worker"]:  # the frozen app re-launching itself
        from app.engine.worker.server import main as worker_main

        sys.exit(worker_main())
    from app.entry import main

    sys.exit(main())
