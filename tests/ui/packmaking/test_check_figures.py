"""The Make Pack dialog's figures of an export check (pack_verify.check_html): an
agreement just below the floor reads below it, as in the card and the terminal."""

from __future__ import annotations

from app.ui.packmaking.pack_verify import check_html
from tests.core.test_verify_export_compare import just_below_the_floor


def test_the_figures_round_an_agreement_down() -> None:
    figures = check_html(just_below_the_floor())
    assert "<td>0.989</td><td>0.989</td>" in figures and "0.990" not in figures
    assert "Export not verified" in figures
