"""The Tune page's results table: one row a measured setting, the best in bold."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont

from app.core.measure.tune_plan import threads_text
from app.core.measure.tune_results import SettingResult, best_result, rows
from app.ui.base.scheme import colours
from app.ui.base.table_model import ColumnsModel, Index
from app.ui.tune.tune_cells import (
    CURRENT,
    CURRENT_NOTE,
    DISTURBED_NOTE,
    REMEASURED,
    REMEASURED_NOTE,
    UNMET,
    UNMET_NOTE,
    drafting_cell,
    format_interval,
    interval_tip,
    plain_drift,
    plain_tip,
    sampler_cell,
)
from app.ui.tune.tune_phone import PhoneShown

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class ResultsModel(ColumnsModel):
    # Short headers, no wider than their figures, so none is cut; the full meaning is in
    # each header's tooltip (TIPS).
    COLUMNS = (
        "d",
        "Drafting",
        "Draft\nthreads",
        "Precision",
        "Memory",
        "Target\nthreads",
        "Sampler",
        "Spec\ntok/s",
        "Plain\ntok/s",
        "Plain\npooled",
        "Uplift",
        "95 %\ninterval",
        "Phone\nuplift",
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
        "adaptive",
        "draft_threads",
        "draft_precision",
        "draft_memory",
        "target_threads",
        "sampled",
        "pair_spec_tok_s",
        "pair_plain_tok_s",
        "baseline_tok_s",
        "uplift",
        "uplift_interval",
        "phone_uplift",
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
        self.current: SettingResult | None = None  # the recipes as they run now
        self.phone: PhoneShown | None = None  # the forecast on the window's phone

    HEADER_TIPS: ClassVar[dict[str, str]] = {
        "draft_length": (
            "Draft length: tokens the draft proposes each round (drafting adaptively: "
            "the most it may propose)"
        ),
        "adaptive": (
            "Drafting: fixed: the full draft length every round, as MNN and TokForge "
            "draft; adaptive: DraftDeck picks each round's length, 0 up to d, and steps "
            "aside to plain decoding when drafting does not pay"
        ),
        "draft_threads": "Draft threads: CPU threads the draft model runs on",
        "draft_precision": "Draft precision: the draft's MNN precision (low or high)",
        "draft_memory": "Draft memory: the draft's MNN memory mode (low or normal)",
        "target_threads": "Target threads: CPU threads the target model runs on",
        "sampled": (
            "Sampler: greedy: the most likely token every time (speculative output equals "
            "plain output when the recipe verifies exactly: see Lossless); "
            "recipe: the target recipe's sampler; temp.: that sampler at another "
            "temperature (measured, never applied)"
        ),
        "pair_spec_tok_s": (
            "Speculative tok/s of the median pair: the speculative run of the pair whose "
            "ratio is the median (the uplift); Spec tok/s over Plain tok/s is the uplift. "
            "With an even number of pairs the median lies between the two middle pairs: "
            "Plain is their mean plain rate, Spec the uplift times it"
        ),
        "pair_plain_tok_s": (
            "Plain tok/s of the median pair: the plain run beside the speculative run of "
            "the pair whose ratio is the uplift (with an even number of pairs, the mean of "
            "the two middle pairs' plain runs); Spec tok/s over it is the uplift"
        ),
        "baseline_tok_s": (
            "Plain tok/s, pooled: plain decoding depends only on the target's settings: "
            "the median of the plain runs of every row with these target settings (the "
            "same for all of them). On a machine whose speed drifts it can differ from a "
            "row's own pairs: compare Spec tok/s with Plain tok/s, not with this"
        ),
        "uplift": (
            "Uplift, median of pairs: the median of per-pair ratios (each speculative run "
            "over the plain run beside it): Spec tok/s over Plain tok/s of the median "
            "pair, never over the pooled figure; pairing cancels a busy machine's drift"
        ),
        "uplift_interval": (
            "95 % interval of the uplift (distribution-free, from order statistics); "
            "speculation pays off only when it lies above 1. Too few pairs for 95 % (a "
            f"cancelled sweep): the level it has, as (75 %). {UNMET_NOTE}. {DISTURBED_NOTE}"
        ),
        "phone_uplift": (
            "Phone uplift: the forecast uplift on the chosen phone (its speculative over its "
            "plain tok/s, minus 1) at the row's draft length, drafting the full length as "
            "MNN and TokForge do. From the acceptance by draft position measured here and "
            "the phone's profile, not measured on the phone; this computer's tok/s, c and "
            "thread counts do not carry over"
        ),
        "pairs": f"Pairs: interleaved plain/speculative run pairs measured. {REMEASURED_NOTE}",
        "acceptance": "Acceptance: the share of drafted tokens the target accepted",
        "mean_accepted_length": "Mean length: tokens gained a round, the target's own included",
        "cost_ratio": "c: the draft's cost of a token over the target's (lower is better)",
        "predicted_speedup": (
            "Predicted: the speedup over plain decoding the measured acceptance and c promise"
        ),
        "break_even_acceptance": (
            "Break-even: the acceptance this draft length needs to gain anything at this c"
        ),
        "lossless": (
            "Lossless: whether speculative output equalled plain decoding's in every pair "
            "(greedy; a recipe with memory low verifies inexactly and may differ)"
        ),
        "verify_agreement": (
            "Verify agreement: how often the recipe's verify picks the token plain decoding does"
        ),
    }

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.ToolTipRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.KEYS)
        ):
            tip = self.HEADER_TIPS[self.KEYS[section]]
            # The hidden columns' values, where the row's own setting is described (a
            # line in the notes would push the fourth row out of view at 700 px).
            same = self.same_note() if section == 0 else ""
            return f"{tip}. {same}" if same else tip
        return super().headerData(section, orientation, role)

    def same_columns(self) -> list[int]:
        """The setting columns whose value is the same in every row: hidden, and said
        once in the notes, so the figures (uplift, its interval, pairs) fit a 1024 px
        window without scrolling sideways (a Quick sweep varies only the draft length)."""
        if not self._rows:
            return []
        return [
            self.KEYS.index(key)
            for key in SETTING_KEYS
            if len({self._cell_text(row, key) for row in self._rows}) == 1
        ]

    def _cell_text(self, row: dict[str, Any], key: str) -> str:
        return sampler_cell(row) if key == "sampled" else str(row[key])

    def same_note(self) -> str:
        """ "Same in every row: draft 2 threads, low precision, …" (empty: none hidden)."""
        if not self._rows:
            return ""
        row = self._rows[0]
        said = {
            "draft_threads": f"draft {threads_text(row['draft_threads'])}",
            "draft_precision": f"{row['draft_precision']} precision",
            "draft_memory": f"{row['draft_memory']} memory",
            "target_threads": f"target {threads_text(row['target_threads'])}",
            "sampled": f"sampler {sampler_cell(row)}",
            "adaptive": f"{drafting_cell(row)} drafting",
        }
        same = [said[self.KEYS[c]] for c in self.same_columns()]
        return f"Same in every row (columns hidden): {', '.join(same)}" if same else ""

    def notes(self) -> str:
        """What the marks in the rows mean, one line (empty: no marks)."""
        notes = []
        if any(UNMET in format_interval(row) for row in self._rows):
            notes.append(UNMET_NOTE)
        if any(row["remeasured"] for row in self._rows):
            notes.append(REMEASURED_NOTE)
        if any(row["disturbed"] for row in self._rows):
            notes.append(DISTURBED_NOTE)
        if self.current is not None:
            notes.append(CURRENT_NOTE)
        if drift := plain_drift(self._rows):
            notes.append(drift)
        return ". ".join(notes) + "." if notes else ""

    def row_total(self) -> int:
        return len(self.results)

    def set_phone(self, phone: PhoneShown | None) -> None:
        """Show the forecast on the window's phone in the phone column."""
        self.beginResetModel()
        self.phone = phone
        self.endResetModel()

    def hidden_columns(self) -> list[int]:
        """The columns the table hides: the settings the same in every row, and the phone
        column while there is no forecast to show in it."""
        hidden = self.same_columns()
        if self.phone is None or self.phone.best_length is None:
            hidden.append(self.KEYS.index("phone_uplift"))
        return hidden

    def _phone_data(self, row: dict[str, Any], role: int) -> Any:
        """The phone column: a fixed row's forecast uplift at its length; none for
        adaptive drafting, which a phone does not do."""
        phone, d = self.phone, int(row["draft_length"])
        if phone is None:
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if row["adaptive"]:
                return "A phone drafts the full length every round: see the fixed rows"
            return phone.uplift_tip(d) or "The forecast covers draft lengths 1 to 6"
        if role == SORT_ROLE:
            value = None if row["adaptive"] else phone.uplift_value(d)
            return value if value is not None else -1
        if role == Qt.ItemDataRole.DisplayRole:
            text = None if row["adaptive"] else phone.uplift_text(d)
            if text is not None and d == phone.best_length:
                return f"{text} ★"
            return text or "—"
        return None

    def set_results(
        self, results: list[SettingResult], current: SettingResult | None = None
    ) -> None:
        """Show `results`; `current` is the row measured as the recipes run now."""
        self.beginResetModel()
        self.results = list(results)
        self._rows = rows(self.results)
        self.best = best_result(self.results)
        self.current = current
        self.endResetModel()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        key = self.KEYS[index.column()]
        row = self._rows[index.row()]
        is_best = self.results[index.row()] is self.best
        if key == "phone_uplift" and role in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
            SORT_ROLE,
        ):
            return self._phone_data(row, role)
        value = row.get("uplift_low") if key == "uplift_interval" else row.get(key)
        if role == Qt.ItemDataRole.DisplayRole:
            if key == "uplift_interval":
                return format_interval(row)
            if key == "pairs":
                return f"{value}{REMEASURED if row['remeasured'] else ''}"
            if key == "draft_length" and self.results[index.row()] is self.current:
                return f"{value}{CURRENT}"
            if key == "sampled":
                return sampler_cell(row)
            if key == "adaptive":
                return drafting_cell(row)
        if role == SORT_ROLE:
            return value if value is not None else -1
        if role == Qt.ItemDataRole.BackgroundRole and is_best:
            return QBrush(QColor(colours().best_row))
        if role == Qt.ItemDataRole.FontRole and is_best:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "verify_agreement":
                return self.results[index.row()].summary.get("verify_note")
            if key in ("pair_plain_tok_s", "baseline_tok_s"):
                return plain_tip(row)
            if key == "sampled" and row["sampled"]:
                return f"Sampler: {row['sampler']}"
            if key == "pairs" and row["remeasured"]:
                return f"{REMEASURED_NOTE}; the count is that measurement's, from scratch"
            if key == "uplift_interval" and (tip := interval_tip(row)):
                return tip
            if key == "draft_length" and self.results[index.row()] is self.current:
                return CURRENT_NOTE
            if key in ("draft_length", "adaptive") and row["adaptive"]:
                return f"Adaptive drafting: up to {row['draft_length']} tokens a round"
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


# The setting columns hidden when every row has the same value (same_columns).
SETTING_KEYS = (
    "draft_threads",
    "draft_precision",
    "draft_memory",
    "target_threads",
    "sampled",
    "adaptive",
)


# Columns that give way, in this order, before the table scrolls sideways; each down to
# the wider of its figures and its header's words (tune_results_view), so neither is cut.
GIVE_WAY_COLUMNS = tuple(
    ResultsModel.KEYS.index(key)
    for key in (
        "baseline_tok_s",
        "pair_plain_tok_s",
        "uplift",
        "break_even_acceptance",
        "predicted_speedup",
        "mean_accepted_length",
        "target_threads",
        "draft_threads",
        "verify_agreement",
        "acceptance",
        "uplift_interval",
        "pair_spec_tok_s",
        "draft_precision",
        "lossless",
        "sampled",
        "adaptive",
        "phone_uplift",
    )
)
