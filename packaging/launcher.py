"""The frozen app's entry point: the same `draftdeck` command as `python -m app`.

In a frozen build there is no `python -m`: the engine worker is this executable run
with `--engine-worker`, which `app.cli.main` handles first.
"""

import multiprocessing
import sys

from app.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
