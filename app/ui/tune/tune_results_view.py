"""The Tune page's results: the table above the uplift chart, and a compared run."""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSplitter, QStyle, QVBoxLayout, QWidget

from app.core.measure.tune_plan import SweepPlan
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun
from app.ui.base.fitted_table import FrozenColumnTable
from app.ui.base.labels import wrap_to_width
from app.ui.tune.tune_chart import UpliftChart
from app.ui.tune.tune_phone import PhoneShown
from app.ui.tune.tune_results_model import GIVE_WAY_COLUMNS, SORT_ROLE, ResultsModel

# Rows the table shows without scrolling (a Quick sweep's four draft lengths and
# adaptive drafting), and the least height left to the chart.
ROWS_IN_VIEW = 5
CHART_LEAST = 220


class ResultsView(QSplitter):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.model = ResultsModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = FrozenColumnTable(())
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setModel(self.proxy)
        self.proxy.modelReset.connect(self._fit_columns)
        # What the table's marks (* and "redone") mean, when any row has one.
        self.notes = wrap_to_width(QLabel())
        self.notes.setObjectName("pageHint")
        self.notes.hide()
        # Which sampler the figures were measured with, above them: beside the form,
        # not above it, so a text that changes at Start does not move the form.
        self.sampler_label = wrap_to_width(QLabel())
        self.sampler_label.setObjectName("pageHint")
        # "Best on the phone: d = N" by the forecast (tune_phone.py), under the table.
        self.phone_label = wrap_to_width(QLabel())
        self.phone_label.setObjectName("pageHint")
        self.phone_label.hide()
        pane = QWidget()
        self._column = QVBoxLayout(pane)
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.addWidget(self.sampler_label)
        self._column.addWidget(self.table, 1)
        self._column.addWidget(self.phone_label)
        self._column.addWidget(self.notes)
        self.chart = UpliftChart()
        self.chart.setMinimumHeight(CHART_LEAST)
        self.addWidget(pane)
        self.addWidget(self.chart)
        self.setChildrenCollapsible(False)
        self._sampled = False
        self._lengths: tuple[int, ...] = ()
        self._compared: TuneRun | None = None  # drawn dashed until the box says otherwise
        self._user_split = False
        self.splitterMoved.connect(self._on_moved)

    def _on_moved(self) -> None:
        self._user_split = True

    def _fit_columns(self) -> None:
        """Give way down to the wider of a column's figures and its header's words: the
        table's own floor (the figures alone) cut headers to "Precisio"."""
        table, header = self.table, self.table.horizontalHeader()
        margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        # A character to spare, as the table keeps for cells: eliding takes the last one.
        spare = header.fontMetrics().averageCharWidth()
        words = [
            header.fontMetrics().size(0, text).width() + 2 * margin + spare
            for text in self.model.COLUMNS
        ]
        table.give_way = tuple(
            (c, max(words[c], table.sizeHintForColumn(c))) for c in GIVE_WAY_COLUMNS
        )
        table.fit_columns()

    def _table_share(self) -> int:
        """The pane's height for the header, ROWS_IN_VIEW rows, a sideways scroll bar and
        the notes, leaving the chart at least CHART_LEAST."""
        table = self.table
        wanted = (
            table.horizontalHeader().sizeHint().height()
            + ROWS_IN_VIEW * table.verticalHeader().defaultSectionSize()
            + table.horizontalScrollBar().sizeHint().height()
            + 2 * table.frameWidth()
            + (self._notes_height() if self.notes.isVisibleTo(self) else 0)
            + (self._label_height(self.phone_label) if self.phone_label.isVisibleTo(self) else 0)
            + self._label_height(self.sampler_label)
        )
        return max(0, min(wanted, self.height() - self.handleWidth() - CHART_LEAST))

    def _notes_height(self) -> int:
        return self._label_height(self.notes)

    def _label_height(self, label: QLabel) -> int:
        return label.heightForWidth(self.width()) + self._column.spacing()

    def _share_out(self) -> None:
        # Until the user drags the handle: then their split stands.
        if not self._user_split:
            share = self._table_share()
            self.setSizes([share, self.height() - self.handleWidth() - share])

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._share_out()

    def show_results(
        self,
        results: list[SettingResult],
        plan: SweepPlan,
        current: SettingResult | None = None,
    ) -> None:
        """The results of a sweep of `plan` (measured so far, mid-sweep); `current` is
        the row measured as the recipes run now (marked)."""
        self._sampled = plan.sample
        self._lengths = plan.draft_lengths
        self.model.set_results(results, current)
        self._hide_columns()
        notes = self.model.notes()
        self.notes.setText(notes)
        self.notes.setVisible(bool(notes))
        self._share_out()
        self._draw()

    def _hide_columns(self) -> None:
        hidden = set(self.model.hidden_columns())
        for column in range(self.model.columnCount()):
            self.table.setColumnHidden(column, column in hidden)
        self.table.fit_columns()

    def show_phone(self, phone: PhoneShown | None) -> None:
        """The forecast on the window's phone: the phone column and the line under the
        table (None: none worked out, nothing said)."""
        self.model.set_phone(phone)
        self._hide_columns()
        self.phone_label.setText(phone.line() if phone is not None else "")
        self.phone_label.setToolTip(phone.tip() if phone is not None else "")
        self.phone_label.setVisible(phone is not None)
        self._share_out()

    def compare(self, other: TuneRun | None) -> None:
        """Draw `other` dashed beside the shown results, now and after they change
        (None: alone)."""
        self._compared = other
        self._draw()

    def _draw(self) -> None:
        other = self._compared
        self.chart.draw(
            self.model.results,
            other.results if other else None,
            sampled=self._sampled,
            compared_sampled=other is not None and other.plan.sample,
            lengths=self._lengths,
        )
