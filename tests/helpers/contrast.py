"""WCAG 2 contrast between two colours (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio)."""

from __future__ import annotations

from PySide6.QtGui import QColor

AA = 4.5  # WCAG AA for body text


def _channel(value: float) -> float:
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def luminance(colour: QColor) -> float:
    red, green, blue = (_channel(c) for c in (colour.redF(), colour.greenF(), colour.blueF()))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one: QColor | str, other: QColor | str) -> float:
    light, dark = sorted((luminance(QColor(one)), luminance(QColor(other))), reverse=True)
    return (light + 0.05) / (dark + 0.05)
