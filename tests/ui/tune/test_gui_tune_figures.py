"""The Tune table says what its two plain columns are and why they differ, and marks an
interval measured while the machine was disturbed (made-up figures, the real model)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.measure.remeasure import disturbance
from app.ui.tune.tune_cells import DISTURBED_NOTE
from app.ui.tune.tune_results_model import ResultsModel
from tests.helpers.tune_results import paired_result, setting_result

TIP = Qt.ItemDataRole.ToolTipRole


def _cell(model: ResultsModel, row: int, key: str, role: int = Qt.ItemDataRole.DisplayRole) -> str:
    return str(model.index(row, model.KEYS.index(key)).data(role))


def test_the_plain_columns_say_what_each_is_and_why_they_differ(qtbot: QtBot) -> None:
    """Per-row Plain 488-965 beside Plain pooled 709 said nothing of why."""
    model = ResultsModel()
    slow = paired_result(1, [600.0] * 6, [488.0] * 6)  # the machine busy
    fast = paired_result(2, [1500.0] * 6, [965.0] * 6)  # the machine quiet
    model.set_results([slow, fast])
    assert _cell(model, 0, "pair_plain_tok_s") == "488.0"
    pooled = _cell(model, 0, "baseline_tok_s")
    assert pooled == _cell(model, 1, "baseline_tok_s") == "726.5"
    for key in ("pair_plain_tok_s", "baseline_tok_s"):
        tip = _cell(model, 0, key, TIP)
        assert "Plain 488.0 tok/s: this setting's own plain runs, each interleaved" in tip
        assert "Plain pooled 726.5 tok/s: the median of all 12 plain runs of the sweep" in tip
        assert "speed drifted" in tip
    assert "Plain pooled all plain runs of the sweep: up to 33% apart here" in model.notes()
    # Plain figures that agree need no legend line.
    model.set_results([paired_result(1, [600.0] * 6, [500.0] * 6)])
    assert "Plain pooled" not in model.notes()


def test_a_disturbed_interval_is_marked_and_explained(qtbot: QtBot) -> None:
    first = {"uplift": 0.83, "uplift_low": 0.73, "uplift_high": 0.88}
    said = disturbance(first, [0.57, 0.6, 0.64, 0.64, 0.68, 0.72])
    result = setting_result(3, 0.64, 0.57, 0.72, remeasured=True, disturbed=said)
    model = ResultsModel()
    model.set_results([result])
    assert _cell(model, 0, "uplift_interval") == "0.57-0.72x!"
    assert _cell(model, 0, "uplift_interval", TIP) == f"Not a 95 % interval: {said}"
    assert DISTURBED_NOTE in model.notes()
