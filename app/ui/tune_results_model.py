"""The Tune page's results table: one row a measured setting, the best in bold."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont

from app.core.measure.tune_results import SettingResult, best_result, rows
from app.ui.fitted_table import CELLS
from app.ui.table_model import ColumnsModel, Index

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class ResultsModel(ColumnsModel):
    # Two-line headers keep the columns as narrow as their figures.
    COLUMNS = (
        "d",
        "Draft\nthreads",
        "Precision",
        "Memory",
        "Target\nthreads",
        "Sampler",
        "Spec\ntok/s",
        "Plain tok/s\n(pooled)",
        "Uplift\n(median of pairs)",
        "95 %\ninterval",
        "Pairs",
        "Accept-\nance",
        "Mean\nlength",
        "c",
        "Predic-\nted",
        "Break-\neven",
        "Loss-\nless",
        "Verify\nagr.",
    )
    KEYS = (
        "draft_length",
        "draft_threads",
        "draft_precision",
        "draft_memory",
        "target_threads",
        "sampled",
        "spec_tok_s",
        "baseline_tok_s",
        "uplift",
        "uplift_interval",
        "pairs",
        "acceptance",
        "mean_accepted_length",
        "cost_ratio",
        "predicted_speedup",
        "break_even_acceptance",
        "lossless",
        "verify_agreement",
    )

    def __init__(self) -> None:
        super().__init__()
        self.results: list[SettingResult] = []
        self._rows: list[dict[str, Any]] = []
        self.best: SettingResult | None = None

    HEADER_TIPS: ClassVar[dict[str, str]] = {
        "baseline_tok_s": (
            "Plain decoding depends only on the target's settings: the median of the plain "
            "runs of every row with these target settings (the same for all of them)"
        ),
        "uplift": (
            "The median of per-pair ratios (each speculative run over the plain run beside "
            "it), not Spec tok/s over Plain tok/s: pairing cancels a busy machine's drift"
        ),
        "uplift_interval": (
            "95 % interval of the uplift (distribution-free, from order statistics); "
            "speculation pays off only when it lies above 1. Marked * when the setting's "
            "interval target was not met within its time budget"
        ),
        "sampled": (
            "greedy: the most likely token every time (the exact comparison); recipe: "
            "the target recipe's sampler; temp.: that sampler at another temperature "
            "(measured, never applied)"
        ),
        "pairs": "Interleaved plain/speculative run pairs measured; r = re-measured fresh",
    }

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.ToolTipRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.KEYS)
        ):
            tip = self.HEADER_TIPS.get(self.KEYS[section])
            # The title in one line too: a narrow column's header may be cut.
            title = self.COLUMNS[section].replace("-\n", "").replace("\n", " ")
            return f"{title}: {tip}" if tip else title
        return super().headerData(section, orientation, role)

    def row_total(self) -> int:
        return len(self.results)

    def set_results(self, results: list[SettingResult]) -> None:
        self.beginResetModel()
        self.results = list(results)
        self._rows = rows(self.results)
        self.best = best_result(self.results)
        self.endResetModel()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        key = self.KEYS[index.column()]
        row = self._rows[index.row()]
        value = row["uplift_low"] if key == "uplift_interval" else row[key]
        is_best = self.results[index.row()] is self.best
        if role == Qt.ItemDataRole.DisplayRole:
            if key == "uplift_interval":
                return format_interval(row)
            if key == "pairs":
                return f"{value}{' r' if row['remeasured'] else ''}"
            if key == "sampled":
                return sampler_cell(row)
        if role == SORT_ROLE:
            return value if value is not None else -1
        if role == Qt.ItemDataRole.BackgroundRole and is_best:
            return QBrush(QColor("#e8f5ec"))
        if role == Qt.ItemDataRole.FontRole and is_best:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "verify_agreement":
                return self.results[index.row()].summary.get("verify_note")
            if key == "sampled" and row["sampled"]:
                return f"Sampler: {row['sampler']}"
            if key in self.HEADER_TIPS:
                return self.HEADER_TIPS[key]
            return "Best setting" if is_best else None
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if value is None:
            return "—"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            if "tok_s" in key:
                return f"{value:,.1f}"
            return f"{value:.2f}x" if key == "uplift" else f"{value:.3f}"
        return str(value)


# Columns whose long headers give way (elided; the full words in their tooltips) before
# the table scrolls sideways: the figures themselves always show in full.
GIVE_WAY = tuple(
    (ResultsModel.KEYS.index(key), CELLS)
    for key in (
        "baseline_tok_s",
        "uplift",
        "break_even_acceptance",
        "predicted_speedup",
        "mean_accepted_length",
        "target_threads",
        "draft_threads",
        "verify_agreement",
        "acceptance",
        "uplift_interval",
        "spec_tok_s",
        "draft_precision",
        "lossless",
        "sampled",
    )
)


def format_interval(row: dict[str, Any]) -> str:
    """ "1.42-1.61x", with "*" when the interval target was not met in the budget."""
    low, high = row.get("uplift_low"), row.get("uplift_high")
    if low is None or high is None:
        return "—"
    unmet = "*" if row.get("interval_target_met") is False else ""
    return f"{low:.2f}-{high:.2f}x{unmet}"


def sampler_cell(row: dict[str, Any]) -> str:
    """ "greedy", "recipe" (the recipe's sampler), or "temp. 1.2" (it at that temperature)."""
    if not row["sampled"]:
        return "greedy"
    t = row["temperature"]
    return "recipe" if t is None else f"temp. {t:g}"
