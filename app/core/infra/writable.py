"""Whether a folder takes new files, asked the only reliable way: by making one.

Permission bits say nothing for root, immutable folders, read-only mounts or Windows
ACLs, so a temporary file is created and removed. A folder that does not exist yet is
judged by the nearest folder above it that does (it would be created there).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def folder_write_problem(folder: Path) -> str | None:
    """Why nothing can be written in `folder`, or None when it can."""
    probe_in = folder
    while not probe_in.exists() and probe_in.parent != probe_in:
        probe_in = probe_in.parent
    if not probe_in.is_dir():
        return f"{probe_in} is not a folder"
    try:
        fd, name = tempfile.mkstemp(prefix=".draftdeck-probe-", dir=probe_in)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return None
