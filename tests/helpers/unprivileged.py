"""Run Python code in a child that permissions bind, even when the tests run as root.

Root reads a chmod 000 file; a child that gave up every capability (setpriv) does not,
so permission checks run for real in both cases. Skipped where neither can be had.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers.paths import ROOT


def run_unprivileged(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    if not hasattr(os, "geteuid"):
        pytest.skip("permission bits are tested on POSIX")
    command = [sys.executable, "-c", code, *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop the capabilities")
        command = [setpriv, "--inh-caps=-all", "--bounding-set=-all", *command]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
