"""The Phone page: attached phones, the packs on the selected one, and a push queue.

A view of the phone desk (app/core/phone/desk.py), which owns the adb connection, the
push lane and the rules the command line follows too. Devices are polled off the GUI
thread while the page is shown (adb tells nobody when a phone comes or goes; debounced,
so a replugged phone does not flicker); the push queue is watched, not polled.
"""

from __future__ import annotations

import posixpath
import time
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QHideEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import PhoneError
from app.core.infra.units import counted, format_bytes
from app.core.pack.bundle import BundleInfo
from app.core.pack.files import PHONE_MARKER
from app.core.pack.library import Library
from app.core.phone.adb import NO_DEVICES
from app.core.phone.desk import PhoneDesk, PhoneFolder
from app.core.phone.devices import Debouncer, DeviceInfo
from app.core.phone.phone_packs import PhonePack
from app.core.phone.push import CANCELLED, DONE, FAILED, FINISHED, PUSHING, PushJob, PushStatus
from app.ui.base import background
from app.ui.base.dialogs import ask, show_error
from app.ui.base.job_models import offer
from app.ui.base.labels import wrap_to_width
from app.ui.base.table_model import setup_table
from app.ui.phone.phone_destinations import DestinationPicker
from app.ui.phone.phone_models import DeviceList, PackList, PhonePacksModel
from app.ui.phone.phone_queue import PushQueuePanel

DEVICE_POLL_MS = 1000
RECIPES_TIP = "Copy only the pack's recipe files (quick tuning loop)"


class PhonePage(QWidget):
    message = Signal(str)
    problem = Signal(str)  # something failed: said longer than a message

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desk = PhoneDesk(library)
        self.debouncer = Debouncer()
        self.devices: list[DeviceInfo] = []
        self._library_packs: dict[str, BundleInfo] = {}
        self._packs_source: tuple[str, str] | None = None  # (serial, root) of the list shown
        # Each push's state as last reacted to, by (phone, pack, recipes only): the page
        # says and re-reads once per change of state, not at every progress report.
        self._push_states: dict[tuple[str, str, bool], str] = {}

        title = QLabel("Phone")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Copy packs and recipes to Android phones over USB (USB debugging on). Every "
            "file is checked by sha256 on the phone; a pack appears there only when complete."
        )
        wrap_to_width(hint)

        self.device_list = DeviceList()
        self.device_list.setObjectName("deviceList")
        self.device_hint = QLabel(NO_DEVICES)
        wrap_to_width(self.device_hint)
        self.device_hint.setObjectName("deviceHint")
        self.pack_list = PackList()
        self.pack_list.setObjectName("libraryPacks")
        self.push_button = QPushButton("Push Pack")
        self.push_button.setToolTip("Copy the selected library pack to the phone (Ctrl+Return)")
        self.recipes_button = QPushButton("Push Recipes")
        self.recipes_button.setToolTip(RECIPES_TIP)
        # Why Push Recipes is off, on the page: only a pack already on the phone takes them.
        self.recipes_hint = wrap_to_width(QLabel())
        self.recipes_hint.setObjectName("pageHint")
        self.recipes_hint.hide()

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
        left_layout.addWidget(self.recipes_hint)

        self.destinations = DestinationPicker(self.desk)
        self.free_label = wrap_to_width(QLabel())  # names the folder, which may be long
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
        right_layout.addWidget(self.destinations)
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

        self.push_queue = PushQueuePanel(self.desk)

        setup_table(self.packs_view)

        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(self.push_queue)
        outer.setStretchFactor(0, 3)
        outer.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addWidget(outer, 1)

        # The tips are what Help's key list says each key does.
        self._add_action(
            "Refresh", "Re-read the phone", QKeySequence.StandardKey.Refresh, self.refresh_phone
        )
        self._add_action(
            "Delete",
            "Delete the selected pack from the phone (asks first)",
            QKeySequence.StandardKey.Delete,
            self.delete_selected,
        )
        self._add_action(
            "Push",
            "Push the selected pack to the selected phone",
            QKeySequence("Ctrl+Return"),
            self.push_selected,
        )

        self.device_list.currentItemChanged.connect(self._on_device_changed)
        self.device_list.pack_dropped.connect(self._on_pack_dropped)
        self.pack_list.currentItemChanged.connect(self._update_buttons)
        self.destinations.changed.connect(self.refresh_phone)
        self.destinations.message.connect(self.message)
        self.push_button.clicked.connect(self.push_selected)
        self.recipes_button.clicked.connect(self.push_recipes_selected)
        self.refresh_button.clicked.connect(self.refresh_phone)
        self.delete_button.clicked.connect(self.delete_selected)
        self.packs_view.selectionModel().selectionChanged.connect(self._update_buttons)

        self.device_timer = QTimer(self)
        self.device_timer.setInterval(DEVICE_POLL_MS)
        self.device_timer.timeout.connect(self.poll_devices)
        background.watch(self, self.desk.queue, self.refresh_queue)
        self._update_buttons()

    def _add_action(
        self, text: str, tip: str, keys: QKeySequence | QKeySequence.StandardKey, slot: object
    ) -> None:
        action = QAction(text, self)
        action.setShortcut(keys)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)

    # -- devices -----------------------------------------------------------------------

    def poll_devices(self) -> None:
        if background.is_running(self, "devices"):
            return  # a slow adb: never pile up listings
        background.run(
            self, "devices", self.desk.devices, self._on_devices, self._on_devices_failed
        )

    def _on_devices(self, devices: list[DeviceInfo]) -> None:
        stable = self.debouncer.update(devices, time.monotonic())
        if stable == self.devices:
            return
        self.devices = stable
        self.device_list.show_devices(stable)
        self.push_queue.model.name_phones(stable)
        self._show_device_hint()

    def _on_devices_failed(self, error: Exception) -> None:
        self.device_hint.setText(str(error))

    def _device(self, serial: str | None) -> DeviceInfo | None:
        return next((d for d in self.devices if d.serial == serial), None)

    def _phone_name(self, serial: str) -> str:
        """What the user calls the phone: its model (an address only until it is known)."""
        return self.push_queue.model.phone_name(serial)

    def selected_device(self) -> DeviceInfo | None:
        serial = self.device_list.selected_serial()
        return self._device(serial)

    def _show_device_hint(self) -> None:
        device = self.selected_device()
        if not self.devices:
            self.device_hint.setText(NO_DEVICES)
        elif device is not None and not device.ready:
            self.device_hint.setText(f"{device.title} is {device.state}. {device.guidance}")
        else:
            self.device_hint.setText("")

    def _on_device_changed(self) -> None:
        self._show_device_hint()
        self._update_buttons()
        self.refresh_phone()

    # -- what is on the phone ----------------------------------------------------------

    def _shown_folder(self) -> tuple[str, str] | None:
        """(serial, root) of the phone and folder the page shows now."""
        device = self.selected_device()
        if device is None or not device.ready:
            return None
        return device.serial, self.destinations.root()

    def refresh_phone(self) -> None:
        # The old list goes at once: a Delete must never act on another phone's or
        # folder's listing.
        self.packs_model.set_packs([])
        self._packs_source = None
        self._update_buttons()
        device, shown = self.selected_device(), self._shown_folder()
        if device is None or shown is None:
            self.free_label.setText("")
            return
        serial, root = shown
        library = dict(self._library_packs)
        self.free_label.setText(f"Reading {root} on {device.title}…")
        background.run(
            self,
            "phone-packs",
            partial(self.desk.read_folder, serial, root, library),
            self._on_phone_read,
            partial(self._on_phone_failed, shown),
        )

    def _on_phone_read(self, folder: PhoneFolder) -> None:
        if (folder.serial, folder.root) != self._shown_folder():
            return  # an answer for a phone or folder no longer shown
        self.packs_model.set_packs(folder.packs)
        self._packs_source = (folder.serial, folder.root)
        free = folder.free
        space = "folder not created yet" if free is None else f"{format_bytes(free)} free"
        self.free_label.setText(f"{counted(len(folder.packs), 'pack')} in {folder.root} · {space}")
        self._update_buttons()

    def _on_phone_failed(self, source: tuple[str, str], error: Exception) -> None:
        if source == self._shown_folder():
            self.free_label.setText(str(error))

    def selected_phone_pack(self) -> PhonePack | None:
        rows = self.packs_view.selectionModel().selectedRows()
        return self.packs_model.packs[rows[0].row()] if rows else None

    def delete_selected(self) -> None:
        pack, source = self.selected_phone_pack(), self._packs_source
        if pack is None or source is None:
            return
        serial, root = source
        try:
            self.desk.check_delete(serial, root, pack.name)
        except PhoneError as exc:
            show_error(self, "Pack in use", exc.message)
            return
        if not pack.ours:  # the phone says so again on delete; refused before asking
            show_error(
                self,
                "Not made by DraftDeck",
                f"{pack.path} has no {PHONE_MARKER}: DraftDeck did not make it and will not "
                "delete it. Delete it on the phone by hand if you are sure.",
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

    def _delete(self, serial: str, root: str, name: str) -> None:
        def work() -> str:
            self.desk.delete(serial, root, name)
            return name

        background.run(self, "delete", work, self._on_deleted, self._on_action_failed)

    def _on_deleted(self, name: str) -> None:
        self.message.emit(f"Deleted {name} from the phone")
        self.refresh_phone()

    def _on_action_failed(self, error: Exception) -> None:
        show_error(self, "Phone", str(error))

    # -- library packs -----------------------------------------------------------------

    def reload_library(self) -> None:
        background.run(
            self, "library", self.desk.library_packs, self._on_library, self._on_action_failed
        )

    def _on_library(self, packs: dict[str, BundleInfo]) -> None:
        self._library_packs = packs
        self.pack_list.show_packs({name: info.path for name, info in packs.items()})
        self._update_buttons()

    # -- pushing -----------------------------------------------------------------------

    def _update_buttons(self) -> None:
        device = self.selected_device()
        ready = device is not None and device.ready
        has_pack = self.pack_list.selected_path() is not None
        self.push_button.setEnabled(ready and has_pack)
        why_not = self._recipes_why_not() if ready and has_pack else "Choose a phone and a pack"
        offer(self.recipes_button, why_not, RECIPES_TIP)
        self.recipes_hint.setText(why_not if ready and has_pack else "")
        self.recipes_hint.setVisible(bool(self.recipes_hint.text()))
        self.delete_button.setEnabled(
            self._packs_source is not None and self.selected_phone_pack() is not None
        )
        self.refresh_button.setEnabled(ready)

    def _recipes_why_not(self) -> str:
        """Why the selected pack's recipes cannot go to the selected phone now ("" if they
        can): recipes alone are only ever written into the pack already there."""
        device, pack, shown = self.selected_device(), self.pack_list.selected_path(), None
        if device is None or pack is None or (shown := self._shown_folder()) is None:
            return "Choose a phone and a pack"
        root = shown[1]
        if self._packs_source != shown:
            return f"Reading {root} on {device.title}…"
        if not any(p.name == pack.name for p in self.packs_model.packs):
            return (
                f"{pack.name} is not on {device.title} in {root}: push the whole pack "
                "once, then its recipes alone."
            )
        return ""

    def push_selected(self, _checked: bool = False, recipe_only: bool = False) -> PushJob | None:
        device, pack = self.selected_device(), self.pack_list.selected_path()
        if device is None or pack is None or not device.ready:
            return None
        if recipe_only and self._recipes_why_not():  # the button is off: so is the key
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
        """Queue a push to the folder shown (the one already queued, if it is)."""
        job = self.desk.push(serial, pack, self.destinations.root(), recipe_only)
        self.refresh_queue()  # the row appears now, not at the job's first report
        self.push_queue.model.follow(self.push_queue.view, job)
        what = "recipes of " if recipe_only else ""
        self.message.emit(f"Pushing {what}{pack.name} to {self._phone_name(serial)}")
        return job

    def refresh_queue(self) -> None:
        for status in self.push_queue.refresh():
            self._on_status(status)

    def _on_status(self, status: PushStatus) -> None:
        key = (status.serial, status.pack, status.recipe_only)
        if self._push_states.get(key) == status.state:
            return  # progress within a state: the queue's row shows it
        self._push_states[key] = status.state
        phone = self._phone_name(status.serial)
        what = f"recipes of {status.pack}" if status.recipe_only else status.pack
        if status.state == DONE:
            self.message.emit(
                f"{status.pack} is on {phone}: {counted(len(status.pushed), 'file')} pushed, "
                f"{len(status.skipped)} already there, all verified"
            )
        elif status.state == CANCELLED:  # replaces "Pushing …", which is no longer true
            self.message.emit(f"Push of {what} to {phone} cancelled: {status.error}")
        elif status.state == FAILED:
            self.problem.emit(f"Push of {what} to {phone} failed: {status.error}")
        # The phone's folder changed: a pack push makes its .partial folder when it starts
        # sending and installs (or leaves) it when it ends.
        changes_folder = status.state in FINISHED or (
            status.state == PUSHING and not status.recipe_only
        )
        if changes_folder and self._shown_folder() == (
            status.serial,
            posixpath.dirname(status.dest),
        ):
            self.refresh_phone()

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
        """Drop answers still on their way, stop pushes (they resume next time:
        verified files are skipped) and the adb server if DraftDeck started it."""
        self.device_timer.stop()
        background.close_owner(self)
        self.desk.shutdown(timeout=2.0, stop_adb=True)  # never freeze the closing window
