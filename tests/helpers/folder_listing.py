"""A folder's files as a test compares them: to see that nothing was added or changed."""

from __future__ import annotations

from pathlib import Path


def listing(folder: Path) -> dict[str, bytes]:
    """Every file in a folder, hidden ones included, with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
