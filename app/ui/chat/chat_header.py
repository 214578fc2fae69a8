"""The words at the top of the Chat page: the engine's state, the loaded pair and why
the mode is what it is."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.engine.protocol import FailureCode
from app.ui.base.engine_bridge import (
    CRASHED,
    ERROR,
    GENERATING,
    LOADING,
    READY,
    STARTING,
    STOPPED,
    EngineState,
)
from app.ui.base.pair_state import PairState
from app.ui.base.scheme import colours

# (sign, words, colour role in app/ui/base/colours.py) per state
STATE_WORDS = {
    STOPPED: ("○", "Engine not started", "hint"),
    STARTING: ("◌", "Starting the engine…", "caution"),
    LOADING: ("◌", "Loading the pair…", "caution"),
    READY: ("●", "Ready", "good"),
    GENERATING: ("●", "Generating…", "accent"),
    ERROR: ("✕", "Cannot run", "error"),
    CRASHED: ("✕", "Engine crashed", "error"),
}
# A worker that stopped answering was killed by the watchdog: it did not crash itself.
UNRESPONSIVE_WORDS = ("✕", "Engine stopped responding", "error")

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
    return (
        "The engine stopped responding"
        if crash_code == FailureCode.UNRESPONSIVE
        else "The engine crashed"
    )


def state_parts(state: EngineState, last_error: str, crash_code: str = "") -> tuple[str, str, str]:
    """The engine's state as a sign and words, their colour's role, and the error when it
    failed."""
    unresponsive = state == CRASHED and crash_code == FailureCode.UNRESPONSIVE
    symbol, words, colour = (
        UNRESPONSIVE_WORDS if unresponsive else STATE_WORDS.get(state, STATE_WORDS[STOPPED])
    )
    return f"{symbol} {words}", colour, last_error if state in (ERROR, CRASHED) else ""


def state_html(state: EngineState, last_error: str, crash_code: str = "") -> str:
    """The engine's state as a coloured sign and words, with the error when it failed."""
    head, role, detail = state_parts(state, last_error, crash_code)
    said = f": {detail}" if detail else ""
    return f"<span style='color:{colours().of(role)}'>{escape(head)}</span>{escape(said)}"


REASON_LINES = 3  # a failure's reason under the header: at most this many lines, folded
SHOW_ALL, SHOW_LESS = "Show all ▾", "Show less ▴"  # drawn as links; a click on the label


class ReasonLabel(QWidget):
    """Why the engine cannot run, under the header: wrapped to the width there is, at
    most REASON_LINES lines, the last cut short with "…" and followed by "Show all"; a
    click shows every line (and "Show less" folds it again). Its height follows its
    width (a long reason never sets the window's minimum width, nor takes half the
    page's height unless asked)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self.expanded = False
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # Space or Enter unfolds it too

    def text(self) -> str:
        return self._text

    def set_text(self, text: str) -> None:
        if text != self._text:
            self.expanded = False
        self._text = text
        self.setToolTip(text)
        self.setVisible(bool(text))
        self._relayout()

    def _relayout(self) -> None:
        self.setCursor(
            Qt.CursorShape.PointingHandCursor if self.folds() else Qt.CursorShape.ArrowCursor
        )
        self.updateGeometry()
        self.update()

    def _wrapped(self, width: int, limit: int | None) -> list[int]:
        """Where each line starts at this width (one more than `limit` when it is cut)."""
        layout = QTextLayout(self._text, self.font())
        # A path or key longer than the line breaks anywhere rather than running off.
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        layout.setTextOption(option)
        layout.beginLayout()
        starts: list[int] = []
        while limit is None or len(starts) <= limit:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(max(width, 1))
            starts.append(line.textStart())
        layout.endLayout()
        return starts

    def folds(self, width: int | None = None) -> bool:
        """The reason is longer than REASON_LINES lines at this width."""
        return len(self._wrapped(width or self.width(), REASON_LINES)) > REASON_LINES

    def lines(self, width: int) -> list[str]:
        """The text as it is drawn at this width (without the Show all/less link)."""
        starts = self._wrapped(width, None if self.expanded else REASON_LINES)
        ends = [*starts[1:], len(self._text)]
        shown = [self._text[a:b].strip() for a, b in zip(starts, ends, strict=True)]
        if len(shown) > REASON_LINES and not self.expanded:
            rest = self._text[starts[REASON_LINES - 1] :].strip()
            room = width - self.fontMetrics().horizontalAdvance(f"  {SHOW_ALL}")
            elided = self.fontMetrics().elidedText(rest, Qt.TextElideMode.ElideRight, room)
            shown = [*shown[: REASON_LINES - 1], elided]
        return shown

    def toggle(self) -> None:
        if self.folds():
            self.expanded = not self.expanded
            self._relayout()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.toggle()
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.toggle()
            return
        super().keyPressEvent(event)

    def _rows(self, width: int) -> int:
        """Lines drawn: the reason's, and when unfolded a line for Show less."""
        extra = 1 if self.expanded and self.folds(width) else 0
        return len(self.lines(width)) + extra

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._rows(width) * self.fontMetrics().lineSpacing()

    def sizeHint(self) -> QSize:
        width = 400  # a preference only: the page's layout gives it the page's width
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        return QSize(1, self.fontMetrics().lineSpacing())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        spacing = self.fontMetrics().lineSpacing()
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        lines = self.lines(self.width())
        for index, line in enumerate(lines):
            painter.drawText(0, index * spacing, self.width(), spacing, flags, line)
        if not self.folds():
            return
        painter.setPen(QColor(colours().accent))
        if self.expanded:
            painter.drawText(0, len(lines) * spacing, self.width(), spacing, flags, SHOW_LESS)
        else:
            after = self.fontMetrics().horizontalAdvance(f"{lines[-1]}  ")
            top = (len(lines) - 1) * spacing
            painter.drawText(after, top, self.width() - after, spacing, flags, SHOW_ALL)


class StateLabel(QLabel):
    """The engine's state on one line: its sign and words, coloured. text() and the
    tooltip hold the error too; the error itself is drawn below, by `reason`, wrapped
    to a few lines: on one line a blocked pair's reasons once set the window's minimum
    width to 1,780 px, and cut to the header's width they could not be read."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._head, self._role = "", "hint"
        self.reason = ReasonLabel()
        self.reason.hide()
        self.setMinimumWidth(1)
        # Takes the header's free width, down to none, whatever the text's length.
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def show_state(self, state: EngineState, last_error: str, crash_code: str = "") -> None:
        self._head, self._role, detail = state_parts(state, last_error, crash_code)
        self.setText(state_html(state, last_error, crash_code))
        self.setToolTip(last_error)
        self.reason.set_text(detail)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        head = self.fontMetrics().elidedText(self._head, Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(QColor(colours().of(self._role)))  # read at each paint: the scheme's
        painter.drawText(rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, head)


def pair_line(state: PairState) -> str:
    """The pair with its verify agreement (or where measuring it stands), whether its
    verify can differ from plain decoding (Loaded.lossless_expected false), and the
    engine's word when it barely fits in memory."""
    target, draft = state.pair
    assert target is not None and draft is not None
    text = f"Target {target.name} · draft {draft.name} · with their saved recipes"
    if state.agreement is not None:
        text += f" · {state.agreement.brief()}"
    elif state.measuring:
        text += " · measuring verify agreement…"
    elif state.after_reply:
        text += " · verify agreement after this reply"
    if state.inexact_verify:
        text += f"\n{INEXACT_VERIFY_NOTE}"
    if state.memory_warning:
        text += f"\n⚠ {state.memory_warning}"
    return text


def pair_tip(state: PairState) -> str:
    """The pair line's tooltip: what its verify agreement and memory note mean."""
    parts = [state.agreement.sentence()] if state.agreement is not None else []
    if state.inexact_verify:
        parts.append(INEXACT_VERIFY_TIP)
    return "\n\n".join(parts)


def plain_default_note(reason: str) -> str:
    """Why the mode was switched to Plain for a pair that cannot gain on this MNN."""
    return (
        f"Plain decoding by default: {reason} (linear_rollback false). "
        "Speculative still works, exactly but slower."
    )
