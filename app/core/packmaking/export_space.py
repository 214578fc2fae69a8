"""Disk space for an export: asked for before it starts, and a full disk named as such
when an export fails on one (the exporter itself only says what broke next, e.g. a
JSONDecodeError reading a file it could not finish writing)."""

from __future__ import annotations

import errno
import shutil
from collections.abc import Sequence
from pathlib import Path

from app.core.infra.units import format_bytes

WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth")
# llmexport writes the whole model again as ONNX (float32) beside the pack before it
# converts it, and the pack itself; three times the source's weights covers a bf16
# source's ONNX copy (2x) and a pack of up to its size.
SPACE_FACTOR = 3
SPARE_BYTES = 64 * 1024 * 1024  # configs, logs, the converter's own files
# Less than this free after a failed export: the disk filled up (the exporter's own
# message then names only what broke next).
FULL_BELOW = 16 * 1024 * 1024
_FULL_WORDS = ("No space left on device", "Errno 28", "ENOSPC", "Disk quota exceeded")


def free_bytes(folder: Path) -> int:
    """Free space on the disk `folder` is (or will be) on: its nearest existing parent."""
    probe = folder.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return int(shutil.disk_usage(probe).free)
    except OSError:
        return 0


def export_needs(source: Path) -> int:
    """About the disk an export of the model in `source` takes while it runs."""
    weights = sum(
        p.stat().st_size for pattern in WEIGHT_PATTERNS for p in source.glob(pattern) if p.is_file()
    )
    return SPACE_FACTOR * weights + SPARE_BYTES


def space_problem(source: Path, out: Path) -> str:
    """Why the disk of `out` is too small for exporting `source`, or ""."""
    needs, free = export_needs(source), free_bytes(out.parent)
    if free >= needs:
        return ""
    return (
        f"{out.parent}: not enough free space to export {source.name}: about "
        f"{format_bytes(needs)} is needed while it runs, {format_bytes(free)} is free"
    )


def disk_full_words(folder: Path) -> str:
    return (
        f"{folder}: the disk is full ({format_bytes(free_bytes(folder))} free); the export "
        "stopped. Free some space there, or choose a folder on another disk"
    )


def is_disk_full(error: OSError) -> bool:
    return error.errno in (errno.ENOSPC, errno.EDQUOT)


def failed_on_full_disk(folder: Path, output: Sequence[str]) -> bool:
    """Whether an export into `folder` that failed with `output` ran out of disk: it
    says so, or the disk is (all but) full now."""
    said = any(words in line for line in output for words in _FULL_WORDS)
    return said or free_bytes(folder) < FULL_BELOW
