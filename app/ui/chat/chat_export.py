"""The Chat page's Export and Save Charts: the dialogs start in the folder last used
for either (kept in the settings), else in the user's Documents folder (else home: a
dialog given a folder that does not exist opens in the current directory). A name
typed without an extension gets the chosen filter's (native dialogs do not add it),
and each saved file is confirmed on the page, naming it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from app.core.infra.settings import Settings
from app.core.measure.chat_record import ChatRecord
from app.ui.base.dialogs import show_error
from app.ui.chat.chat_charts import ChatCharts

JSON_FILTER, MARKDOWN_FILTER = "JSON (*.json)", "Markdown (*.md)"
EXPORT_SUFFIXES = {JSON_FILTER: ".json", MARKDOWN_FILTER: ".md"}
PNG_FILTER = "PNG (*.png)"


def documents_folder() -> Path:
    found = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(found) if found and Path(found).is_dir() else Path.home()


def export_path(name: str, chosen_filter: str) -> tuple[Path, bool]:
    """The file an Export dialog's answer names, and whether it is Markdown. A name
    without .json or .md gets the chosen filter's extension ("lighthouse" with Markdown
    chosen is lighthouse.md); one with either keeps it, whatever the filter."""
    path = Path(name)
    if path.suffix.lower() not in EXPORT_SUFFIXES.values():
        path = path.with_name(path.name + EXPORT_SUFFIXES.get(chosen_filter, ".json"))
    return path, path.suffix.lower() == ".md"


def png_path(name: str) -> Path:
    path = Path(name)
    return path if path.suffix.lower() == ".png" else path.with_name(path.name + ".png")


class ChatExport:
    def __init__(
        self,
        parent: QWidget,
        record: Callable[[], ChatRecord],
        charts: ChatCharts,
        say: Callable[[str], None],
        settings: Settings | None = None,
    ) -> None:
        self.parent = parent
        self.record = record
        self.charts = charts
        self.say = say  # the page's note: what was saved where
        self.settings = settings or Settings()  # saved with the window's settings

    @property
    def last_folder(self) -> Path | None:
        folder = self.settings.export_folder
        return Path(folder) if folder and Path(folder).is_dir() else None

    def start_path(self, name: str) -> str:
        return str((self.last_folder or documents_folder()) / name)

    def write(self, path: Path, markdown: bool) -> None:
        """Raises OSError; the folder is remembered once the file is written."""
        record = self.record()
        if markdown:
            record.write_markdown(path)
        else:
            record.write_json(path)
        self._saved(path, "Exported the chat")

    def _saved(self, path: Path, what: str) -> None:
        self.settings.export_folder = str(path.parent)
        self.say(f"{what} to {path}.")

    def export(self) -> None:
        name, chosen = QFileDialog.getSaveFileName(
            self.parent,
            "Export chat",
            self.start_path("chat.json"),
            f"{JSON_FILTER};;{MARKDOWN_FILTER}",
        )
        self.export_to(name, chosen)

    def export_to(self, name: str, chosen_filter: str) -> None:
        """What the Export dialog's answer leads to ("" for Cancel)."""
        if not name:
            return
        path, markdown = export_path(name, chosen_filter)
        try:
            self.write(path, markdown)
        except OSError as exc:
            show_error(self.parent, "Export failed", f"{path}: {exc}")

    def save_charts(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self.parent, "Save charts", self.start_path("charts.png"), PNG_FILTER
        )
        self.save_charts_to(name)

    def save_charts_to(self, name: str) -> None:
        """What the Save Charts dialog's answer leads to ("" for Cancel)."""
        if not name:
            return
        path = png_path(name)
        if self.charts.save_png(str(path)):
            self._saved(path, "Saved the charts")
        else:
            show_error(self.parent, "Could not save the charts", str(path))
