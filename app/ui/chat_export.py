"""The Chat page's Export and Save Charts: the dialogs start in the folder last used
for either (this session), else in the user's Documents folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from app.core.measure.chat_record import ChatRecord
from app.ui.chat_charts import ChatCharts
from app.ui.dialogs import show_error


def documents_folder() -> Path:
    found = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(found) if found else Path.home()


class ChatExport:
    def __init__(
        self, parent: QWidget, record: Callable[[], ChatRecord], charts: ChatCharts
    ) -> None:
        self.parent = parent
        self.record = record
        self.charts = charts
        self.last_folder: Path | None = None

    def start_path(self, name: str) -> str:
        return str((self.last_folder or documents_folder()) / name)

    def write(self, path: Path, markdown: bool) -> None:
        """Raises OSError; the folder is remembered once the file is written."""
        record = self.record()
        if markdown:
            record.write_markdown(path)
        else:
            record.write_json(path)
        self.last_folder = path.parent

    def export(self) -> None:
        name, chosen = QFileDialog.getSaveFileName(
            self.parent,
            "Export chat",
            self.start_path("chat.json"),
            "JSON (*.json);;Markdown (*.md)",
        )
        if not name:
            return
        try:
            self.write(Path(name), markdown=name.endswith(".md") or "Markdown" in chosen)
        except OSError as exc:
            show_error(self.parent, "Export failed", f"{name}: {exc}")

    def save_charts(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self.parent, "Save charts", self.start_path("charts.png"), "PNG (*.png)"
        )
        if not name:
            return
        if self.charts.save_png(name):
            self.last_folder = Path(name).parent
        else:
            show_error(self.parent, "Could not save the charts", name)
