"""The Tune page's results: the table above the uplift chart, and a compared run."""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QSplitter, QWidget

from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun
from app.ui.fitted_table import FrozenColumnTable
from app.ui.tune_chart import UpliftChart
from app.ui.tune_results_model import GIVE_WAY, SORT_ROLE, ResultsModel


class ResultsView(QSplitter):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.model = ResultsModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = FrozenColumnTable(GIVE_WAY)
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setModel(self.proxy)
        self.chart = UpliftChart()
        self.addWidget(self.table)
        self.addWidget(self.chart)
        self._sampled = False

    def show_results(self, results: list[SettingResult], sampled: bool) -> None:
        """`sampled`: measured with the recipe's sampler (else greedy)."""
        self._sampled = sampled
        self.model.set_results(results)
        self.chart.draw(self.model.results, sampled=sampled)

    def compare(self, other: TuneRun | None) -> None:
        """Draw `other` dashed beside the shown results (None: alone)."""
        self.chart.draw(
            self.model.results,
            other.results if other else None,
            sampled=self._sampled,
            compared_sampled=other is not None and other.plan.sample,
        )
