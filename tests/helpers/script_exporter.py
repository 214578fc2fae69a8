"""Export environments whose exporter is a small script of the test's, run by the Python
running the tests in place of llmexport.py: it prints and writes what the test says into
the folder the job gives it, and every check after it is the real one. No torch needed.

`script_env` is for an ExportJob made by the test; `ready_script_env` makes a folder that
DraftDeck itself takes for a ready export environment (its stamp, key packages and
interpreter), for the Make Pack dialog to find through DRAFTDECK_EXPORT_ENV.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from app.core.packmaking.export_env import (
    KEY_PACKAGES,
    STAMP,
    ExportEnv,
    constraints_lock,
    pinned_requirements,
    stamp_for,
    torch_index,
)


class ScriptEnv(ExportEnv):
    """An export environment whose exporter is `<folder>/llmexport/llmexport.py`, run by
    the Python running the tests."""

    @property
    def python(self) -> Path:
        return Path(sys.executable)


def script_env(tmp_path: Path, exporter: str) -> ExportEnv:
    folder = tmp_path / "env"
    (folder / "llmexport").mkdir(parents=True)
    (folder / "llmexport" / "llmexport.py").write_text(exporter, encoding="utf-8")
    (folder / STAMP).write_text(json.dumps({"llmexport_dir": str(folder / "llmexport")}))
    return ScriptEnv(folder)


def ready_script_env(folder: Path, exporter: str) -> ExportEnv:
    """A folder ready_export_env() accepts, whose exporter is `exporter` (POSIX: its
    interpreter is a link to this Python, which needs only its standard library here)."""
    site = folder / "lib" / "site-packages"
    for package in KEY_PACKAGES:
        (site / package).mkdir(parents=True, exist_ok=True)
        (site / package / "__init__.py").touch()
    (site / "llmexport").mkdir()
    (site / "llmexport" / "llmexport.py").write_text(exporter, encoding="utf-8")
    stamp = stamp_for(pinned_requirements(), constraints_lock(), torch_index())
    stamp["llmexport_dir"] = str(site / "llmexport")
    (folder / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
    env = ExportEnv(folder)
    env.python.parent.mkdir(parents=True)
    os.symlink(sys.executable, env.python)
    return env
