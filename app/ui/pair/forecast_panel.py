"""The Pair page's phone forecast: the table for the chosen pair and phone profile, its
assumptions in words, where the acceptance came from, and, when none is measured yet,
the offer to measure it here (with progress and Cancel). It renders a ForecastShown
(forecast_state.py) and forwards the user's clicks; it decides nothing itself."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui.base.labels import wrap_to_width
from app.ui.pair.forecast_state import HEADERS, ForecastShown, MeasureProgress

MEASURE_TIP = (
    "Runs the pair on this computer in an engine of its own: three short prompts, greedy, "
    "drafting 6 tokens every round, and keeps how often the target accepted each position. "
    "Chat keeps its own engine; replies written there add to the same figures."
)


class ForecastPanel(QWidget):
    measure_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("phoneForecast")
        self.shown: ForecastShown | None = None
        self.title = QLabel()
        self.title.setObjectName("sectionTitle")
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("forecastTable")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # As large as its cells, never scrolling: six short rows, read at a glance.
        rows = self.table.verticalHeader()
        rows.setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.setSizeAdjustPolicy(QTableWidget.SizeAdjustPolicy.AdjustToContents)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setToolTip(
            "Tokens per second forecast on the phone for each draft length: plain "
            "decoding (the target alone) and speculative decoding with this draft. The "
            "uplift is speculative over plain; its likely range comes from how sure the "
            "acceptance and the phone's figures are."
        )
        self.reason = wrap_to_width(QLabel())  # why there is no forecast, what to do
        self.reason.setObjectName("pageHint")
        self.source = wrap_to_width(QLabel())
        self.source.setObjectName("pageHint")
        self.assumptions = wrap_to_width(QLabel())
        self.assumptions.setObjectName("pageHint")
        self.assumptions.setTextFormat(Qt.TextFormat.RichText)
        self.measure_button = QPushButton("&Measure Acceptance Here")
        self.measure_button.setToolTip(MEASURE_TIP)
        self.measure_button.clicked.connect(self.measure_requested)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop measuring; the replies already decoded are kept")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.progress = QProgressBar()
        self.progress.setFormat("%p%")
        self.progress_label = wrap_to_width(QLabel())
        self.progress_label.setObjectName("pageHint")
        measure_row = QHBoxLayout()
        measure_row.addWidget(self.measure_button)
        measure_row.addWidget(self.progress, 1)
        measure_row.addWidget(self.cancel_button)
        measure_row.addStretch(0)  # the button keeps its own width while none runs

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.reason)
        layout.addLayout(measure_row)
        layout.addWidget(self.progress_label)
        table_row = QHBoxLayout()
        table_row.addWidget(self.table)
        table_row.addStretch(1)
        layout.addLayout(table_row)
        layout.addWidget(self.source)
        layout.addWidget(self.assumptions)
        layout.addStretch(1)
        self.show_measuring(None)
        self.show_forecast(ForecastShown(None, reason="Choose a target and a draft."))

    def show_forecast(self, shown: ForecastShown) -> None:
        self.shown = shown
        self.title.setText(shown.title)
        self.reason.setText(shown.reason)
        self.reason.setVisible(bool(shown.reason))
        self.source.setText(shown.source)
        self.source.setVisible(bool(shown.source))
        if shown.assumptions:
            items = "".join(f"<li>{escape(a)}</li>" for a in shown.assumptions)
            self.assumptions.setText(
                f"Assumptions:<ul style='margin-top:0; margin-left:-20px'>{items}</ul>"
            )
        self.assumptions.setVisible(bool(shown.assumptions))
        self._fill_table(shown)
        self._show_buttons()

    def _fill_table(self, shown: ForecastShown) -> None:
        self.table.setRowCount(len(shown.rows))
        for r, cells in enumerate(shown.rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c > 0:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if r == shown.best_row:  # bold and a star: never colour alone
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.setVisible(bool(shown.rows))

    def show_measuring(self, progress: MeasureProgress | None) -> None:
        """A measurement under way (None: none)."""
        self._measuring = progress is not None
        self.progress.setVisible(self._measuring)
        self.cancel_button.setVisible(self._measuring)
        self.progress_label.setVisible(self._measuring)
        if progress is not None:
            self.progress.setRange(0, max(progress.total, 1))
            self.progress.setValue(progress.done)
            self.progress_label.setText(progress.describe())
        self._show_buttons()

    def say(self, text: str) -> None:
        """What the last measurement came to (or why it stopped)."""
        self.progress_label.setText(text)
        self.progress_label.setVisible(bool(text))

    def _show_buttons(self) -> None:
        wanted = self.shown is not None and self.shown.needs_acceptance
        self.measure_button.setVisible(wanted or self._measuring)
        self.measure_button.setEnabled(not self._measuring)
