"""Human-readable units."""

from __future__ import annotations

_UNITS = ("B", "KB", "MB", "GB", "TB")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 pack`, `2 packs`: a count with its noun agreeing (`plural` when not noun + s)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def format_bytes(size: float) -> str:
    """Binary multiples, one decimal above bytes: 1536 -> '1.5 KB'."""
    for unit in _UNITS[:-1]:
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} {_UNITS[-1]}"


def format_time_left(seconds: float | None) -> str:
    """Time left; blank when unknown. Never "0 s": work with something left is not over."""
    if seconds is None:
        return ""
    return f"{max(seconds, 1):.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
