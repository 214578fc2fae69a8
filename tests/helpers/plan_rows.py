"""The rows of the Downloads page's file table, as shown (for small plans in tests)."""

from __future__ import annotations

from app.ui.downloads.plan_model import PlanModel


def plan_rows(model: PlanModel) -> list[tuple[str, ...]]:
    """Each row's cells as displayed, top to bottom."""
    return [
        tuple(str(model.index(row, column).data()) for column in range(model.columnCount()))
        for row in range(model.rowCount())
    ]


def shown_files(model: PlanModel) -> list[str]:
    return [row[0] for row in plan_rows(model)]
