"""The words at the top of the Chat page: the engine's state, the loaded pair and why
the mode is what it is."""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

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

INEXACT_VERIFY_NOTE = (
    "memory: low — speculative output may differ slightly from plain; use memory: normal "
    "for exact comparisons"
)
INEXACT_VERIFY_TIP = (
    "With memory: low, MNN quantizes the target's activations per call, and it rounds a "
    "call checking several draft tokens differently from a one-token step: now and then "
    "the target picks another token when verifying than when decoding alone. Use memory: "
    "normal in the target's recipe for exact comparisons."
)


def crash_title(crash_code: str) -> str:
    """The heading for the worker going away, by its EngineCrashed code."""
    return "The engine stopped responding" if crash_code == UNRESPONSIVE else "The engine crashed"


def state_parts(state: str, last_error: str, crash_code: str = "") -> tuple[str, str, str]:
    """The engine's state as a sign and words, their colour, and the error when it failed."""
    unresponsive = state == CRASHED and crash_code == UNRESPONSIVE
    symbol, words, colour = (
        UNRESPONSIVE_WORDS if unresponsive else STATE_WORDS.get(state, STATE_WORDS["stopped"])
    )
    detail = f": {last_error}" if state in (ERROR, CRASHED) and last_error else ""
    return f"{symbol} {words}", colour, detail


def state_html(state: str, last_error: str, crash_code: str = "") -> str:
    """The engine's state as a coloured sign and words, with the error when it failed."""
    head, colour, detail = state_parts(state, last_error, crash_code)
    return f"<span style='color:{colour}'>{escape(head)}</span>{escape(detail)}"


class StateLabel(QLabel):
    """The engine's state on one line. text() holds all of it; a long error is painted
    cut short with "…" to the width there is, the whole of it in the tooltip: a blocked
    pair's reasons, on one line, once set the window's minimum width to 1,780 px, and
    wrapped they took half the page's height."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._head, self._colour, self._detail = "", "", ""
        self.setMinimumWidth(1)
        # Takes the header's free width, down to none, whatever the text's length.
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def show_state(self, state: str, last_error: str, crash_code: str = "") -> None:
        self._head, self._colour, self._detail = state_parts(state, last_error, crash_code)
        self.setText(state_html(state, last_error, crash_code))
        self.setToolTip(last_error)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        metrics = self.fontMetrics()
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        head = metrics.elidedText(self._head, Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(QColor(self._colour))
        painter.drawText(rect, align, head)
        rest = rect.adjusted(metrics.horizontalAdvance(head), 0, 0, 0)
        painter.setPen(self.palette().windowText().color())
        detail = metrics.elidedText(self._detail, Qt.TextElideMode.ElideRight, rest.width())
        painter.drawText(rest, align, detail)


def pair_line(
    target: Path,
    draft: Path,
    found: VerifyAgreement | None,
    measuring: bool,
    waits_for_reply: bool,
    memory_warning: str,
    inexact_verify: bool,
) -> str:
    """The loaded pair with its verify agreement (or where measuring it stands), and
    whether its verify can differ from plain decoding (Loaded.lossless_expected false)."""
    text = f"Target {target.name} · draft {draft.name} · with their saved recipes"
    if found is not None:
        text += f" · verify agreement {found.agreement:.2f}"
        if not found.exact:
            text += f" (an identical draft would reach about {found.ceiling:.2f})"
    elif measuring:
        text += " · measuring verify agreement…"
    elif waits_for_reply:
        text += " · verify agreement after this reply"
    if inexact_verify:
        text += f"\n{INEXACT_VERIFY_NOTE}"
    if memory_warning:
        text += f"\n⚠ {memory_warning}"
    return text


def pair_tip(found: VerifyAgreement | None, inexact_verify: bool) -> str:
    """The pair line's tooltip: what its verify agreement and memory note mean."""
    parts = [found.sentence()] if found is not None else []
    if inexact_verify:
        parts.append(INEXACT_VERIFY_TIP)
    return "\n\n".join(parts)


def plain_default_note(reason: str) -> str:
    """Why the mode was switched to Plain for a pair that cannot gain on this MNN."""
    return (
        f"Plain decoding by default: {reason} (linear_rollback false). "
        "Speculative still works, exactly but slower."
    )
