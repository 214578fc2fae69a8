"""The machine figures the window's status bar shows: the engine's RAM and the CPU load
of the whole system (labelled so: a busy machine is not the engine's doing)."""

from __future__ import annotations

import psutil


def system_figures(engine_pid: int | None) -> str:
    """RAM used by the engine worker (when one runs) and the whole system's CPU load
    since the last call."""
    cpu = f"CPU (system) {psutil.cpu_percent(interval=None):.0f}%"
    if engine_pid is None:
        return cpu
    try:
        rss = psutil.Process(engine_pid).memory_info().rss
    except psutil.Error:  # the worker exited since its pid was read
        return cpu
    return f"Engine RAM {rss / 2**20:.0f} MB · {cpu}"
