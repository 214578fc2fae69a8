"""Guards against Qt binding bugs that would crash the app after long use."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt


class _NoneModel(QAbstractTableModel):
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 1

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 1

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        return None


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")
def test_model_data_returning_none_keeps_its_reference() -> None:
    # PySide6 6.12.0 lost one reference to None per call; the app then died with
    # "deallocating None" after enough repaints. pyproject.toml excludes that release.
    model = _NoneModel()
    index = model.index(0, 0)
    before = sys.getrefcount(None)
    for _ in range(1000):
        index.data(Qt.ItemDataRole.DisplayRole)
    assert abs(sys.getrefcount(None) - before) < 50
