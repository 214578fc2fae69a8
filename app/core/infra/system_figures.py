"""The machine figures the window's status bar shows: the engine's RAM and the CPU load."""

from __future__ import annotations

import psutil


def system_figures(engine_pid: int | None) -> str:
    """RAM used by the engine worker (when one runs) and the CPU load since the last call."""
    cpu = psutil.cpu_percent(interval=None)
    if engine_pid is None:
        return f"CPU {cpu:.0f}%"
    try:
        rss = psutil.Process(engine_pid).memory_info().rss
    except psutil.Error:  # the worker exited since its pid was read
        return f"CPU {cpu:.0f}%"
    return f"Engine RAM {rss / 2**20:.0f} MB · CPU {cpu:.0f}%"
