"""The project's scripts (scripts/, packaging/) as modules: they are files, not a package."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tests.helpers.paths import ROOT


def load_script(path: Path) -> ModuleType:
    """The module in `path` (relative to the repository), loaded afresh."""
    spec = importlib.util.spec_from_file_location(path.stem, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tasks_module() -> ModuleType:
    return load_script(Path("scripts/tasks.py"))
