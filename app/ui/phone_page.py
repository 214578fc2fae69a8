"""The Phone page: attached phones, the packs on the selected one, and a push queue.

Devices are polled on the thread pool while the page is shown (debounced, so a
replugged phone does not flicker); pushes run one at a time on their own lane.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QHideEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import PhoneError
from app.core.infra.job_queue import JobQueue
from app.core.infra.settings import save_settings
from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo
from app.core.pack.library import Library, PackEntry
from app.core.phone.adb import NO_DEVICES, Adb
from app.core.phone.destinations import PARTIAL, all_destinations, check_root
from app.core.phone.devices import Debouncer, DeviceInfo, DeviceLister
from app.core.phone.phone_packs import PhonePack, delete_pack, list_packs
from app.core.phone.push import DONE, FAILED, FINISHED, PushJob, PushStatus
from app.core.phone.remote_fs import free_bytes
from app.ui import background
from app.ui.dialogs import ask, show_error
from app.ui.job_models import ProgressDelegate
from app.ui.phone_models import DeviceList, PackList, PhonePacksModel, PushQueueModel
from app.ui.table_model import setup_table

DEVICE_POLL_MS = 1000


QUEUE_POLL_MS = 200


class PhonePage(QWidget):
    message = Signal(str)

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.settings = library.settings
        self.adb = Adb()
        self.lister = DeviceLister(self.adb)
        self.debouncer = Debouncer()
        self.queue: JobQueue[PushJob] = JobQueue(1, "adb")
        self.devices: list[DeviceInfo] = []
        self._polling = False
        self._library_packs: dict[str, BundleInfo] = {}
        self._packs_request = 0
        self._shut_down = False
        self._packs_source: tuple[str, str] | None = None  # (serial, root) of the list shown

        title = QLabel("Phone")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Copy packs and recipes to Android phones over USB (USB debugging on). Every "
            "file is checked by sha256 on the phone; a pack appears there only when complete."
        )
        hint.setWordWrap(True)

        self.device_list = DeviceList()
        self.device_list.setObjectName("deviceList")
        self.device_hint = QLabel(NO_DEVICES)
        self.device_hint.setWordWrap(True)
        self.device_hint.setObjectName("deviceHint")
        self.pack_list = PackList()
        self.pack_list.setObjectName("libraryPacks")
        self.push_button = QPushButton("Push Pack")
        self.push_button.setToolTip("Copy the selected library pack to the phone (Ctrl+Return)")
        self.recipes_button = QPushButton("Push Recipes")
        self.recipes_button.setToolTip("Copy only the pack's recipe files (quick tuning loop)")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Phones"))
        left_layout.addWidget(self.device_list, 2)
        left_layout.addWidget(self.device_hint)
        left_layout.addWidget(QLabel("Library packs (drag one onto a phone)"))
        left_layout.addWidget(self.pack_list, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.push_button)
        buttons.addWidget(self.recipes_button)
        left_layout.addLayout(buttons)

        self.dest_combo = QComboBox()
        self.dest_combo.setObjectName("destination")
        self.add_dest_button = QPushButton("Add Folder…")
        self.free_label = QLabel("")
        self.free_label.setObjectName("freeSpace")
        self.packs_model = PhonePacksModel()
        self.packs_view = QTableView()
        self.packs_view.setObjectName("phonePacks")
        self.packs_view.setModel(self.packs_model)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Read the phone again (F5)")
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setToolTip("Delete the selected pack from the phone (Del)")

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        dest_row = QHBoxLayout()
        dest_row.addWidget(QLabel("Destination"))
        dest_row.addWidget(self.dest_combo, 1)
        dest_row.addWidget(self.add_dest_button)
        right_layout.addLayout(dest_row)
        right_layout.addWidget(self.free_label)
        right_layout.addWidget(self.packs_view, 1)
        pack_buttons = QHBoxLayout()
        pack_buttons.addWidget(self.refresh_button)
        pack_buttons.addWidget(self.delete_button)
        pack_buttons.addStretch(1)
        right_layout.addLayout(pack_buttons)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(left)
        top.addWidget(right)
        top.setStretchFactor(1, 2)

        self.queue_model = PushQueueModel()
        self.queue_view = QTableView()
        self.queue_view.setObjectName("pushQueue")
        self.queue_view.setModel(self.queue_model)
        self.queue_view.setItemDelegateForColumn(
            PushQueueModel.COLUMNS.index("Progress"), ProgressDelegate(self.queue_view)
        )
        self.cancel_button = QPushButton("Cancel")
        self.retry_button = QPushButton("Push Again")
        self.retry_button.setToolTip("Resume: files already verified on the phone are skipped")
        self.clear_button = QPushButton("Clear Finished")
        queue_buttons = QHBoxLayout()
        queue_buttons.addWidget(QLabel("Push queue"))
        queue_buttons.addStretch(1)
        for button in (self.cancel_button, self.retry_button, self.clear_button):
            queue_buttons.addWidget(button)

        setup_table(self.packs_view)
        setup_table(self.queue_view)

        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addLayout(queue_buttons)
        bottom_layout.addWidget(self.queue_view)
        outer.addWidget(bottom)
        outer.setStretchFactor(0, 3)
        outer.setStretchFactor(1, 2)
        self.queue_view.setMinimumHeight(110)

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addWidget(outer, 1)

        self._add_action("Refresh", QKeySequence.StandardKey.Refresh, self.refresh_phone)
        self._add_action("Delete", QKeySequence.StandardKey.Delete, self.delete_selected)
        self._add_action("Push", QKeySequence("Ctrl+Return"), self.push_selected)

        self.device_list.currentItemChanged.connect(self._on_device_changed)
        self.device_list.pack_dropped.connect(self._on_pack_dropped)
        self.pack_list.currentItemChanged.connect(self._update_buttons)
        self.dest_combo.currentIndexChanged.connect(self._on_dest_changed)
        self.add_dest_button.clicked.connect(self.add_destination)
        self.push_button.clicked.connect(self.push_selected)
        self.recipes_button.clicked.connect(self.push_recipes_selected)
        self.refresh_button.clicked.connect(self.refresh_phone)
        self.delete_button.clicked.connect(self.delete_selected)
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.retry_button.clicked.connect(self.retry_selected)
        self.clear_button.clicked.connect(self.clear_finished)
        self.packs_view.selectionModel().selectionChanged.connect(self._update_buttons)

        self.device_timer = QTimer(self)
        self.device_timer.setInterval(DEVICE_POLL_MS)
        self.device_timer.timeout.connect(self.poll_devices)
        self.queue_timer = QTimer(self)
        self.queue_timer.setInterval(QUEUE_POLL_MS)
        self.queue_timer.timeout.connect(self.poll_queue)
        self._fill_destinations()
        self._update_buttons()

    def _add_action(
        self, text: str, keys: QKeySequence | QKeySequence.StandardKey, slot: object
    ) -> None:
        action = QAction(text, self)
        action.setShortcut(keys)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        self.addAction(action)

    # -- destinations ------------------------------------------------------------------

    def _fill_destinations(self) -> None:
        self.dest_combo.blockSignals(True)
        self.dest_combo.clear()
        for dest in all_destinations(self.settings.phone_destinations):
            self.dest_combo.addItem(f"{dest.name} — {dest.root}", dest.root)
            self.dest_combo.setItemData(
                self.dest_combo.count() - 1, dest.note, Qt.ItemDataRole.ToolTipRole
            )
        index = self.dest_combo.findData(self.settings.phone_root)
        self.dest_combo.setCurrentIndex(max(index, 0))
        self.dest_combo.blockSignals(False)

    def root(self) -> str:
        return str(self.dest_combo.currentData())

    def add_destination(self) -> None:
        text, ok = QInputDialog.getText(
            self, "Add a destination", "Folder on the phone that holds packs:", text="/sdcard/"
        )
        if not ok:
            return
        try:
            root = check_root(text)
        except PhoneError as exc:
            show_error(self, "Not a usable folder", exc.message)
            return
        if root not in self.settings.phone_destinations:
            self.settings.phone_destinations.append(root)
        self.settings.phone_root = root
        self._save()
        self._fill_destinations()
        self.refresh_phone()

    def _on_dest_changed(self) -> None:
        self.settings.phone_root = self.root()
        self._save()
        self.refresh_phone()

    def _save(self) -> None:
        try:
            save_settings(self.settings)
        except OSError as exc:
            self.message.emit(f"Could not save settings: {exc}")

    # -- devices -----------------------------------------------------------------------

    def poll_devices(self) -> None:
        if self._polling:
            return
        self._polling = True
        background.run(self, "devices", self.lister.list, self._on_devices, self._on_devices_failed)

    def _on_devices(self, devices: list[DeviceInfo]) -> None:
        self._polling = False
        if self._shut_down:  # an answer arriving after the window closed starts nothing
            return
        stable = self.debouncer.update(devices, time.monotonic())
        if stable == self.devices:
            return
        self.devices = stable
        self.device_list.show_devices(stable)
        self._show_device_hint()

    def _on_devices_failed(self, error: Exception) -> None:
        self._polling = False
        self.device_hint.setText(str(error))

    def _device(self, serial: str | None) -> DeviceInfo | None:
        return next((d for d in self.devices if d.serial == serial), None)

    def selected_device(self) -> DeviceInfo | None:
        serial = self.device_list.selected_serial()
        return self._device(serial)

    def _show_device_hint(self) -> None:
        device = self.selected_device()
        if not self.devices:
            self.device_hint.setText(NO_DEVICES)
        elif device is not None and not device.ready:
            self.device_hint.setText(f"{device.serial} is {device.state}. {device.guidance}")
        else:
            self.device_hint.setText("")

    def _on_device_changed(self) -> None:
        self._show_device_hint()
        self._update_buttons()
        self.refresh_phone()

    # -- what is on the phone ----------------------------------------------------------

    def refresh_phone(self) -> None:
        # The old list goes at once: a Delete must never act on another phone's or
        # folder's listing.
        self._packs_request += 1
        self.packs_model.set_packs([])
        self._packs_source = None
        self._update_buttons()
        device = self.selected_device()
        if device is None or not device.ready:
            self.free_label.setText("")
            return
        request, serial, root = self._packs_request, device.serial, self.root()
        library = dict(self._library_packs)

        def work() -> tuple[int, list[PhonePack]]:
            phone = self.adb.phone(serial)
            packs = list_packs(phone, root, library)
            try:
                free = free_bytes(phone, root)
            except PhoneError:  # the folder does not exist yet: nothing pushed there
                free = -1
            return free, packs

        self.free_label.setText(f"Reading {root} on {device.title}…")
        background.run(
            self,
            "phone-packs",
            work,
            partial(self._on_phone_read, request, serial, root),
            partial(self._on_phone_failed, request),
        )

    def _on_phone_read(
        self, request: int, serial: str, root: str, result: tuple[int, list[PhonePack]]
    ) -> None:
        if request != self._packs_request or self._shut_down:
            return  # an answer for a phone or folder no longer shown
        free, packs = result
        self.packs_model.set_packs(packs)
        self._packs_source = (serial, root)
        space = f"{format_bytes(free)} free" if free >= 0 else "folder not created yet"
        self.free_label.setText(f"{len(packs)} packs in {root} · {space}")
        self._update_buttons()

    def _on_phone_failed(self, request: int, error: Exception) -> None:
        if request == self._packs_request and not self._shut_down:
            self.free_label.setText(str(error))

    def selected_phone_pack(self) -> PhonePack | None:
        rows = self.packs_view.selectionModel().selectedRows()
        return self.packs_model.packs[rows[0].row()] if rows else None

    def delete_selected(self) -> None:
        pack, source = self.selected_phone_pack(), self._packs_source
        if pack is None or source is None:
            return
        serial, root = source
        if self._pushing_to(serial, pack.path):
            show_error(
                self,
                "Pack in use",
                f"{pack.name} is being pushed to {serial}. Cancel that push first.",
            )
            return
        device = self._device(serial)
        ask(
            self,
            "Delete from phone",
            f"Delete {pack.name} ({format_bytes(pack.size)}) from "
            f"{device.title if device else serial}? This cannot be undone on the phone.",
            "Delete",
            lambda: self._delete(serial, root, pack.name),
        )

    def _pushing_to(self, serial: str, path: str) -> bool:
        base = path.removesuffix(PARTIAL)
        return any(
            not job.is_finished()
            and job.status().serial == serial
            and job.status().dest.removesuffix(PARTIAL) == base
            for job in self.queue.jobs
        )

    def _delete(self, serial: str, root: str, name: str) -> None:
        def work() -> str:
            delete_pack(self.adb.phone(serial), root, name)
            return name

        background.run(self, "delete", work, self._on_deleted, self._on_action_failed)

    def _on_deleted(self, name: str) -> None:
        self.message.emit(f"Deleted {name} from the phone")
        self.refresh_phone()

    def _on_action_failed(self, error: Exception) -> None:
        show_error(self, "Phone", str(error))

    # -- library packs -----------------------------------------------------------------

    def reload_library(self) -> None:
        background.run(self, "library", self.library.scan, self._on_library, self._on_action_failed)

    def _on_library(self, entries: list[PackEntry]) -> None:
        if self._shut_down:
            return
        self._library_packs = {e.name: e.info for e in entries if e.info is not None}
        self.pack_list.show_packs({name: info.path for name, info in self._library_packs.items()})
        self._update_buttons()

    # -- pushing -----------------------------------------------------------------------

    def _update_buttons(self) -> None:
        device = self.selected_device()
        ready = device is not None and device.ready
        has_pack = self.pack_list.selected_path() is not None
        self.push_button.setEnabled(ready and has_pack)
        self.recipes_button.setEnabled(ready and has_pack)
        self.delete_button.setEnabled(
            self._packs_source is not None and self.selected_phone_pack() is not None
        )
        self.refresh_button.setEnabled(ready)

    def push_selected(self, _checked: bool = False, recipe_only: bool = False) -> PushJob | None:
        device, pack = self.selected_device(), self.pack_list.selected_path()
        if device is None or pack is None or not device.ready:
            return None
        return self.start_push(device.serial, pack, recipe_only)

    def push_recipes_selected(self) -> PushJob | None:
        return self.push_selected(recipe_only=True)

    def _on_pack_dropped(self, serial: str, folder: str) -> None:
        device = self._device(serial)
        if device is None or not device.ready:
            show_error(self, "Phone not ready", device.guidance if device else NO_DEVICES)
            return
        self.start_push(serial, Path(folder), recipe_only=False)

    def start_push(self, serial: str, pack: Path, recipe_only: bool) -> PushJob:
        for job in self.queue.jobs:
            s = job.status()
            if (
                not job.is_finished()
                and s.serial == serial
                and job.pack == pack
                and s.recipe_only == recipe_only
            ):
                return job  # already queued
        job = PushJob(self.adb, serial, pack, self.root(), recipe_only)
        self.queue.submit(job)
        self.queue_model.add_job(job)
        self.queue_timer.start()
        what = "recipes of " if recipe_only else ""
        self.message.emit(f"Pushing {what}{pack.name} to {serial}")
        return job

    def poll_queue(self) -> None:
        for status in self.queue_model.refresh():
            self._on_status(status)
        if self.queue_model.all_shown_in(FINISHED):
            self.queue_timer.stop()

    def _on_status(self, status: PushStatus) -> None:
        if status.state == DONE:
            self.message.emit(
                f"{status.pack} is on {status.serial}: {len(status.pushed)} files pushed, "
                f"{len(status.skipped)} already there, all verified"
            )
            if self.device_list.selected_serial() == status.serial:
                self.refresh_phone()
        elif status.state == FAILED:
            self.message.emit(f"Push of {status.pack} failed: {status.error}")

    def cancel_selected(self) -> None:
        job = self.queue_model.selected_job(self.queue_view)
        if job is not None:
            job.cancel()

    def retry_selected(self) -> None:
        job = self.queue_model.selected_job(self.queue_view)
        if job is not None and job.is_finished():
            self.queue.submit(job)  # resumes: verified files are skipped
            self.queue_timer.start()

    def clear_finished(self) -> None:
        self.queue.forget(self.queue_model.remove_rows_where(set(FINISHED)))

    # -- lifecycle ---------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        self.reload_library()
        self.poll_devices()
        self.device_timer.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self.device_timer.stop()
        super().hideEvent(event)

    def shutdown(self) -> None:
        """Stop pushes (they resume next time: verified files are skipped)."""
        self._shut_down = True
        self.device_timer.stop()
        self.queue_timer.stop()
        self.queue.shutdown(timeout=2.0)  # never freeze the closing window
