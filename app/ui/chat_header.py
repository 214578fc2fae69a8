"""The words at the top of the Chat page: the engine's state, the loaded pair and why
the mode is what it is."""

from __future__ import annotations

from pathlib import Path

from app.core.measure.verify_agreement import VerifyAgreement
from app.ui.engine_bridge import CRASHED, ERROR, GENERATING, LOADING, READY, STARTING

STATE_WORDS = {
    "stopped": ("○", "Engine not started", "#5c6475"),
    STARTING: ("◌", "Starting the engine…", "#8a5300"),
    LOADING: ("◌", "Loading the pair…", "#8a5300"),
    READY: ("●", "Ready", "#1e6b34"),
    GENERATING: ("●", "Generating…", "#3b5bdb"),
    ERROR: ("✕", "Cannot run", "#a1261b"),
    CRASHED: ("✕", "Engine crashed", "#a1261b"),
}
# A worker that stopped answering was killed by the watchdog: it did not crash itself.
UNRESPONSIVE_WORDS = ("✕", "Engine stopped responding", "#a1261b")
UNRESPONSIVE = "unresponsive"  # EngineUnresponsive's code

EXACT_ROLLBACK_NOTE = (
    "This MNN rolls linear-attention state back exactly (linear_rollback true): "
    "the target checks the whole draft in one pass."
)
PLAIN_DEFAULT_TIP = (
    "This MNN cannot take rejected draft tokens out of the target's "
    "linear-attention state, so the target checks the draft one token at a "
    "time: every token still costs it a step of its own."
)


def crash_title(crash_code: str) -> str:
    """The heading for the worker going away, by its EngineCrashed code."""
    return "The engine stopped responding" if crash_code == UNRESPONSIVE else "The engine crashed"


def state_html(state: str, last_error: str, crash_code: str = "") -> str:
    """The engine's state as a coloured sign and words, with the error when it failed."""
    unresponsive = state == CRASHED and crash_code == UNRESPONSIVE
    symbol, words, colour = (
        UNRESPONSIVE_WORDS if unresponsive else STATE_WORDS.get(state, STATE_WORDS["stopped"])
    )
    detail = f": {last_error}" if state in (ERROR, CRASHED) and last_error else ""
    return f"<span style='color:{colour}'>{symbol} {words}</span>{detail}"


def pair_line(
    target: Path,
    draft: Path,
    found: VerifyAgreement | None,
    measuring: bool,
    waits_for_reply: bool,
    memory_warning: str,
) -> str:
    """The loaded pair with its verify agreement (or where measuring it stands)."""
    text = f"Target {target.name} · draft {draft.name} · with their saved recipes"
    if found is not None:
        text += f" · verify agreement {found.agreement:.2f}"
        if not found.exact:
            text += f" (an identical draft would reach about {found.ceiling:.2f})"
    elif measuring:
        text += " · measuring verify agreement…"
    elif waits_for_reply:
        text += " · verify agreement after this reply"
    if memory_warning:
        text += f"\n⚠ {memory_warning}"
    return text


def plain_default_note(reason: str) -> str:
    """Why the mode was switched to Plain for a pair that cannot gain on this MNN."""
    return (
        f"Plain decoding by default: {reason} (linear_rollback false). "
        "Speculative still works, exactly but slower."
    )
