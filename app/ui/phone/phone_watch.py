"""What the Phone page shows of the phone desk, kept up to date off the GUI thread: the
attached phones (asked once a second while watched: adb tells nobody when a phone
comes or goes), the packs in the folder shown on the phone, and the library's packs to
compare them with. The page draws what this announces and keeps no copies.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.pack.bundle import BundleInfo
from app.core.pack.library import PackEntry
from app.core.phone.desk import PhoneDesk, PhoneFolder
from app.core.phone.devices import DeviceInfo
from app.ui.base import background

DEVICE_POLL_MS = 1000


class PhoneWatch(QObject):
    devices_changed = Signal(object)  # list[DeviceInfo], once a change has lasted
    devices_failed = Signal(str)  # adb could not be asked
    folder_changed = Signal(object)  # PhoneFolder | None (None: being read, or none shown)
    folder_failed = Signal(str)  # the folder shown could not be read
    library_changed = Signal()
    library_failed = Signal(str)

    def __init__(self, desk: PhoneDesk, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.desk = desk
        self.devices: list[DeviceInfo] = []
        self.library: dict[str, BundleInfo] = {}  # the library's readable packs by name
        self.packs: list[PackEntry] = []  # every pack as read, twins of one name included
        self.listed: PhoneFolder | None = None  # the phone folder whose packs are known
        self._shown: tuple[str, str] | None = None  # (serial, root) asked for last
        self.timer = QTimer(self)
        self.timer.setInterval(DEVICE_POLL_MS)
        self.timer.timeout.connect(self.poll_devices)

    # -- phones ------------------------------------------------------------------------

    def start(self) -> None:
        """Ask for the phones now and every second until `stop` (the page is shown)."""
        self.poll_devices()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def poll_devices(self) -> None:
        if background.is_running(self, "devices"):
            return  # a slow adb: never pile up listings
        background.run(
            self, "devices", self.desk.poll_devices, self._on_devices, self._on_devices_failed
        )

    def _on_devices(self, stable: list[DeviceInfo]) -> None:
        if stable != self.devices:
            self.devices = stable
            self.devices_changed.emit(stable)

    def _on_devices_failed(self, error: Exception) -> None:
        self.devices_failed.emit(str(error))

    def device(self, serial: str | None) -> DeviceInfo | None:
        return next((d for d in self.devices if d.serial == serial), None)

    # -- the folder shown --------------------------------------------------------------

    def read_folder(self, shown: tuple[str, str] | None) -> None:
        """Read the packs in `shown` (serial, root; None: nothing shown). The old list goes
        at once: a Delete must never act on another phone's or folder's listing."""
        self._shown = shown
        self.listed = None
        self.folder_changed.emit(None)
        if shown is None:
            return
        serial, root = shown
        background.run(
            self,
            "phone-packs",
            partial(self.desk.read_folder, serial, root, dict(self.library)),
            self._on_folder_read,
            partial(self._on_folder_failed, shown),
        )

    def _on_folder_read(self, folder: PhoneFolder) -> None:
        if (folder.serial, folder.root) != self._shown:
            return  # an answer for a phone or folder no longer shown
        self.listed = folder
        self.folder_changed.emit(folder)

    def _on_folder_failed(self, source: tuple[str, str], error: Exception) -> None:
        if source == self._shown:
            self.folder_failed.emit(str(error))

    # -- the library -------------------------------------------------------------------

    def reload_library(self) -> None:
        background.run(
            self, "library", self.desk.library.scan, self._on_library, self._on_library_failed
        )

    def _on_library(self, entries: list[PackEntry]) -> None:
        self.packs = entries
        self.library = self.desk.library_packs(entries)
        self.library_changed.emit()

    def _on_library_failed(self, error: Exception) -> None:
        self.library_failed.emit(str(error))

    def close(self) -> None:
        """Stop polling and drop every answer still on its way (the window is closing)."""
        self.timer.stop()
        background.close_owner(self)
