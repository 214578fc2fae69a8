"""A folder nothing can be created in, for root too: chmod for users, `chattr +i` for root
(who ignores permission bits). Tests that need one are skipped where neither holds."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _chattr(flag: str, folder: Path) -> bool:
    tool = shutil.which("chattr")
    if tool is None:
        return False
    return subprocess.run([tool, flag, str(folder)], capture_output=True).returncode == 0


@contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    if not hasattr(os, "geteuid"):
        pytest.skip("read-only folders are tested on POSIX")
    as_root = os.geteuid() == 0
    if as_root:
        if not _chattr("+i", folder):
            pytest.skip("running as root and chattr +i does not work here")
    else:
        folder.chmod(0o555)
    try:
        probe = folder / ".probe"
        try:
            probe.touch()
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip(f"{folder} stayed writable")
        yield folder
    finally:
        if as_root:
            _chattr("-i", folder)
        else:
            folder.chmod(0o755)
