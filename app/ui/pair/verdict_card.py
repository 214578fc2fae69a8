"""A verdict as a card: colour plus words (never colour alone), every reason with its
evidence, and the pack's own advice. The card is as tall as its words (never a large
empty box) and scrolls inside when the page is shorter than that."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.core.pack.verdict import (
    BLOCKED,
    CANNOT_PAY,
    COMPATIBLE,
    INFO,
    MEASURED_MNN,
    WARNING,
    WARNINGS,
    Reason,
    Verdict,
)
from app.core.recipe.wording import reason_text
from app.ui.base.labels import wrap_to_width
from app.ui.base.scheme import colours, scheme

# (symbol, title)
STYLES = {
    COMPATIBLE: ("✓", "Compatible"),
    WARNINGS: ("⚠", "Compatible, with warnings"),
    CANNOT_PAY: ("⊘", f"Compatible, but speculation cannot pay on MNN {MEASURED_MNN}"),
    BLOCKED: ("✕", "Blocked: this pair cannot run"),
}


def level_colours(level: str) -> tuple[str, str]:
    """A verdict level's (background, border and text colour) in the scheme drawn now."""
    now = colours()
    return {
        COMPATIBLE: now.compatible,
        WARNINGS: now.warnings,
        CANNOT_PAY: now.cannot_pay,
        BLOCKED: now.blocked,
    }[level]


SECTION_TITLES = {BLOCKED: "Why it cannot work", WARNING: "Warnings", INFO: "Good to know"}


def _evidence(reason: Reason) -> str:
    if reason.severity == INFO or (reason.target is None and reason.draft is None):
        return ""
    return (
        f"<br><span style='color:{colours().hint}'>target: {escape(reason.shown(reason.target))}"
        f" &nbsp;·&nbsp; draft: {escape(reason.shown(reason.draft))}</span>"
    )


def verdict_html(verdict: Verdict) -> str:
    parts = []
    for severity in (BLOCKED, WARNING, INFO):
        reasons = verdict.of(severity)
        if not reasons:
            continue
        items = "".join(f"<li>{escape(reason_text(r))}{_evidence(r)}</li>" for r in reasons)
        parts.append(f"<p><b>{SECTION_TITLES[severity]}</b></p><ul>{items}</ul>")
    if not parts:
        parts.append("<p>No problems found: same vocabulary, tokenizer and family.</p>")
    return "".join(parts)


class VerdictCard(QScrollArea):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # The card sizes its box itself: a resizable scroll-area widget is never made
        # shorter than its minimum, which wrapping labels reckon at their narrowest.
        self.setWidgetResizable(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frame = QFrame()
        self.frame.setObjectName("verdictCard")
        self.title = QLabel()
        self.title.setObjectName("verdictTitle")
        wrap_to_width(self.title)
        self.body = QLabel()
        wrap_to_width(self.body)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self.frame)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        self.setWidget(self.frame)
        self._fitted_width = -1
        self._shown: tuple[Verdict | None, str, str] = (None, "", "")
        scheme().changed.connect(self._recolour)
        self.show_verdict(None)

    def needed_height(self) -> int:
        """The height that shows every word at the card's present width."""
        margins = 2 * self.frameWidth()
        return self.frame.heightForWidth(max(1, self.width() - margins)) + margins

    def _place_box(self) -> None:
        width = self.viewport().width()
        self.frame.resize(width, max(self.frame.heightForWidth(width), self.viewport().height()))

    def sizeHint(self) -> QSize:
        # With the Maximum policy: never taller than the words need; a short page may
        # give less, then the card scrolls.
        return QSize(super().sizeHint().width(), self.needed_height())

    def _refit(self) -> None:
        self._fitted_width = self.width()
        self.updateGeometry()
        self._place_box()

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Also called when the viewport narrows for the scroll bar.
        super().resizeEvent(event)
        if self.width() != self._fitted_width:
            self._refit()  # the words wrap anew: another height
        else:
            self._place_box()

    def _recolour(self) -> None:
        self.show_verdict(*self._shown)

    def show_verdict(
        self, verdict: Verdict | None, note: str = "", title: str = "Choose a target and a draft"
    ) -> None:
        self._shown = (verdict, note, title)
        if verdict is None:
            self.frame.setStyleSheet("")
            self.title.setText(title)
            self.body.setText(note or "The verdict appears here at once.")
            self._refit()
            return
        symbol, title = STYLES[verdict.level]
        background, ink = level_colours(verdict.level)
        self.frame.setStyleSheet(
            f"QFrame#verdictCard {{ background: {background}; border: 2px solid {ink};"
            f" border-radius: 8px; }} QLabel#verdictTitle {{ color: {ink}; font-size: 14pt;"
            " font-weight: 600; }"
        )
        model = f" · target looks like {verdict.target_model}" if verdict.target_model else ""
        self.title.setText(f"{symbol}  {title}{model}")
        self.body.setText(verdict_html(verdict))
        self._refit()
