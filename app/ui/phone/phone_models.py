"""Item models and list widgets for the Phone page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem

from app.core.infra.units import format_bytes
from app.core.infra.units import format_time_left as format_eta
from app.core.pack.library import PackEntry
from app.core.pack.pack_names import display_names
from app.core.phone.devices import DeviceInfo
from app.core.phone.phone_packs import PhonePack
from app.core.phone.push import DONE, PUSHING, PushJob, PushStatus
from app.ui.base.job_models import JobQueueModel
from app.ui.base.scheme import colours
from app.ui.base.table_model import ColumnsModel, Index

SERIAL_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 1


def _dropped_folder(mime: QMimeData) -> Path | None:
    for url in mime.urls():
        if url.isLocalFile() and Path(url.toLocalFile()).is_dir():
            return Path(url.toLocalFile())
    return None


class DeviceList(QListWidget):
    """Attached phones; a pack folder dropped on a ready phone asks to push it there."""

    pack_dropped = Signal(str, str)  # serial, pack folder

    def __init__(self) -> None:
        super().__init__()
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)
        self.setWordWrap(True)

    def show_devices(self, devices: Sequence[DeviceInfo]) -> None:
        """Replace the rows, keeping the selected phone selected."""
        current = self.selected_serial()
        self.clear()
        for device in devices:
            if device.ready:
                ram = f" · {format_bytes(device.ram_bytes)} RAM" if device.ram_bytes else ""
                text = f"{device.title}\nAndroid {device.android} · {device.abi}{ram}"
            else:  # what to do about it, where the phone is listed
                text = f"{device.title} · {device.state}\n{device.guidance}"
            item = QListWidgetItem(text)
            item.setData(SERIAL_ROLE, device.serial)
            item.setToolTip(device.serial + (f"\n{device.guidance}" if device.guidance else ""))
            if not device.ready:
                item.setForeground(QColor(colours().caution))
            self.addItem(item)
            if device.serial == current:
                self.setCurrentItem(item)
        if self.currentItem() is None and self.count():
            self.setCurrentRow(0)

    def selected_serial(self) -> str | None:
        item = self.currentItem()
        return str(item.data(SERIAL_ROLE)) if item is not None else None

    def _target(self, event: QDragMoveEvent | QDropEvent) -> QListWidgetItem | None:
        if _dropped_folder(event.mimeData()) is None:
            return None
        return self.itemAt(event.position().toPoint())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_folder(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        item = self._target(event)
        if item is not None:
            self.setCurrentItem(item)
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        item = self._target(event)
        folder = _dropped_folder(event.mimeData())
        if item is None or folder is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.pack_dropped.emit(str(item.data(SERIAL_ROLE)), str(folder))


class PackList(QListWidget):
    """The library's packs, to select for a push or drag onto a phone."""

    def __init__(self) -> None:
        super().__init__()
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)

    def show_packs(self, packs: Sequence[PackEntry]) -> None:
        """The readable packs, twins of one name included, each under its label (worked
        out over every pack, as in the Library: pack_names.py)."""
        current = self.selected_path()
        self.clear()
        names = display_names(packs)
        readable = [(names[e.path], e.path) for e in packs if e.ok]
        for name, path in sorted(readable, key=lambda pair: (pair[0].lower(), str(pair[1]))):
            item = QListWidgetItem(name)
            item.setData(PATH_ROLE, str(path))
            item.setToolTip(str(path))
            self.addItem(item)
            if current is not None and path == current:
                self.setCurrentItem(item)

    def selected_path(self) -> Path | None:
        item = self.currentItem()
        return Path(str(item.data(PATH_ROLE))) if item is not None else None

    def mimeData(self, items: Sequence[QListWidgetItem]) -> QMimeData:
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(item.data(PATH_ROLE))) for item in items])
        return mime


class PhonePacksModel(ColumnsModel):
    COLUMNS = ("Pack", "Size", "Files", "Library")

    def __init__(self) -> None:
        super().__init__()
        self.packs: list[PhonePack] = []

    def set_packs(self, packs: list[PhonePack]) -> None:
        self.beginResetModel()
        self.packs = list(packs)
        self.endResetModel()

    def row_total(self) -> int:
        return len(self.packs)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.valid(index):
            return None
        pack = self.packs[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:
            column = self.COLUMNS[index.column()]
            if column == "Library" and pack.recipes is not None:  # the phone-side check
                return "\n".join(pack.recipes.lines())
            return pack.path
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return {
            "Pack": pack.name,
            "Size": format_bytes(pack.size),
            "Files": str(pack.files),
            "Library": pack.match,
        }.get(self.COLUMNS[index.column()])


class PushQueueModel(JobQueueModel[PushJob, PushStatus]):
    COLUMNS = ("Pack", "Phone", "State", "Progress", "Speed", "Left", "Details")

    def __init__(self) -> None:
        super().__init__()
        # Models of the phones seen (kept after a phone leaves: its rows still name it).
        self._names: dict[str, str] = {}

    def name_phones(self, devices: Sequence[DeviceInfo]) -> None:
        self._names.update({d.serial: d.model for d in devices if d.model})
        if self.jobs:
            column = self.COLUMNS.index("Phone")
            self.dataChanged.emit(self.index(0, column), self.index(len(self.jobs) - 1, column))

    def phone_name(self, serial: str) -> str:
        return self._names.get(serial, serial)

    def tooltip(self, status: PushStatus, column: str) -> str:
        if column == "Phone":
            return f"adb address {status.serial}"
        if column == "Details":  # the error, what the push noted, the memory check
            return "\n".join(t for t in (status.error, *status.notes, status.memory) if t)
        return super().tooltip(status, column)

    def cell(self, status: PushStatus, column: str) -> str:
        details = status.error
        if not details and status.state == DONE:
            details = (
                f"{len(status.pushed)} pushed, {len(status.skipped)} already there, "
                f"{len(status.verified)} verified → {status.dest}"
            )
            if status.link:  # the draft the target's config.json names on the phone
                there = "" if status.link_ok else " (not on the phone)"
                details += f" · draft_config_path {status.link}{there}"
        elif not details and status.current_file:
            details = status.current_file
            if status.file_size:
                details += f" {format_bytes(status.file_done)} / {format_bytes(status.file_size)}"
            if status.state == PUSHING and 0 < status.file_size <= status.file_done:
                # Sent: the phone hashes it before it counts (a long wait for a big file).
                details += " · checking sha256 on the phone"
        what = f"{status.pack} (recipes)" if status.recipe_only else status.pack
        return {
            "Pack": what,
            "Phone": self.phone_name(status.serial),
            "State": status.state,
            "Speed": f"{format_bytes(status.speed)}/s" if status.speed else "",
            "Left": format_eta(status.eta_seconds),
            "Details": details,
        }.get(column, "")
