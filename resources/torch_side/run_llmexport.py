"""Run MNN's llmexport.py with transformers' trust in the model folder's code set by
DraftDeck: `python run_llmexport.py trust|no-trust LLMEXPORT_PY ARGS...`.

Runs INSIDE the export environment, never in the app (app/core/packmaking/export_run.py
starts it). llmexport asks transformers to trust every folder's code; with `no-trust`
(anything but `trust`) that request is overruled (no_remote_code.py) before llmexport
runs, as it would run from the command line.
"""

from __future__ import annotations

import os
import sys

from no_remote_code import forbid_remote_code


def main() -> None:
    trust, script, *args = sys.argv[1:]
    if trust != "trust":
        forbid_remote_code()
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python llmexport.py`
    # Run as __main__ by hand: runpy.run_path restores sys.argv[0] at the end, and fails
    # there on the argv llmexport leaves.
    with open(script, encoding="utf-8") as source:
        code = compile(source.read(), script, "exec")
    exec(code, {"__name__": "__main__", "__file__": script, "__builtins__": __builtins__})


if __name__ == "__main__":
    main()
