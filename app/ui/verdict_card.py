"""A verdict as a card: colour plus words (never colour alone), every reason with its
evidence, and the pack's own advice."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

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
from app.ui.labels import wrap_to_width

# (symbol, title, background, border/text colour)
STYLES = {
    COMPATIBLE: ("✓", "Compatible", "#e8f5ec", "#1e6b34"),
    WARNINGS: ("⚠", "Compatible, with warnings", "#fff5e1", "#8a5300"),
    CANNOT_PAY: (
        "⊘",
        f"Compatible, but speculation cannot pay on MNN {MEASURED_MNN}",
        "#eef1f6",
        "#3d4a63",
    ),
    BLOCKED: ("✕", "Blocked: this pair cannot run", "#fdecea", "#a1261b"),
}
SECTION_TITLES = {BLOCKED: "Why it cannot work", WARNING: "Warnings", INFO: "Good to know"}


def _evidence(reason: Reason) -> str:
    if reason.severity == INFO or (reason.target is None and reason.draft is None):
        return ""
    return (
        f"<br><span style='color:#555'>target: {escape(reason.shown(reason.target))}"
        f" &nbsp;·&nbsp; draft: {escape(reason.shown(reason.draft))}</span>"
    )


def verdict_html(verdict: Verdict) -> str:
    parts = []
    for severity in (BLOCKED, WARNING, INFO):
        reasons = verdict.of(severity)
        if not reasons:
            continue
        items = "".join(f"<li>{escape(r.message)}{_evidence(r)}</li>" for r in reasons)
        parts.append(f"<p><b>{SECTION_TITLES[severity]}</b></p><ul>{items}</ul>")
    if not parts:
        parts.append("<p>No problems found: same vocabulary, tokenizer and family.</p>")
    return "".join(parts)


class VerdictCard(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verdictCard")
        self.title = QLabel()
        self.title.setObjectName("verdictTitle")
        self.body = QLabel()
        wrap_to_width(self.body)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        layout.addStretch(1)
        self.show_verdict(None)

    def show_verdict(
        self, verdict: Verdict | None, note: str = "", title: str = "Choose a target and a draft"
    ) -> None:
        if verdict is None:
            self.setStyleSheet("")
            self.title.setText(title)
            self.body.setText(note or "The verdict appears here at once.")
            return
        symbol, title, background, ink = STYLES[verdict.level]
        self.setStyleSheet(
            f"QFrame#verdictCard {{ background: {background}; border: 2px solid {ink};"
            f" border-radius: 8px; }} QLabel#verdictTitle {{ color: {ink}; font-size: 14pt;"
            " font-weight: 600; }"
        )
        model = f" · target looks like {verdict.target_model}" if verdict.target_model else ""
        self.title.setText(f"{symbol}  {title}{model}")
        self.body.setText(verdict_html(verdict))
