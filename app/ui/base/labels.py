"""Labels that hold messages: they wrap, and never set the window's minimum size."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel


def wrap_to_width(label: QLabel) -> QLabel:
    """Let a message label wrap, and never widen the window: its minimum width is its
    own, not its longest word's (a long error or pack path once made it 1,780 px; one
    word with no place to break, 2,838)."""
    label.setWordWrap(True)
    label.setMinimumWidth(1)
    return label


def not_started_while(busy: str) -> str:
    """Why a measurement did not start while `busy` ("a Tune sweep is measuring")."""
    return (
        f"Not started: {busy}. Two measurements at once slow each other and both figures "
        "would be wrong; start again when it has ended."
    )
