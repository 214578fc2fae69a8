"""The Phone page: attached phones, the packs on the selected one, and a push queue.

A view of the window's phone desk (app/core/phone/desk.py), which owns the adb
connection, the push lane, the debounced device list and the rules the command line
follows too. What the page shows of it (the phones, polled while the page is shown; the
packs in the folder shown; the library's packs) is kept by a PhoneWatch
(phone_watch.py); the push queue is watched, not polled.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
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
from app.core.pack.files import PHONE_MARKER
from app.core.phone.adb import NO_DEVICES
from app.core.phone.desk import PhoneDesk, PhoneFolder, device_hint, recipes_refusal
from app.core.phone.devices import DeviceInfo
from app.core.phone.phone_packs import PhonePack
from app.core.phone.push import PushJob, PushStatus
from app.core.phone.push_news import changed_folder, push_news
from app.ui.base import background
from app.ui.base.dialogs import ask, show_error
from app.ui.base.job_models import offer
from app.ui.base.labels import wrap_to_width
from app.ui.base.pair_selection import PairSelection
from app.ui.base.table_model import setup_table
from app.ui.phone.phone_check import PhoneCheckPanel
from app.ui.phone.phone_destinations import DestinationPicker
from app.ui.phone.phone_models import PhonePacksModel
from app.ui.phone.phone_pair import ask_push_both, chosen_pair, pair_step, pair_words
from app.ui.phone.phone_queue import PushQueuePanel
from app.ui.phone.phone_results_panel import PhoneResultsPanel
from app.ui.phone.phone_sources import RECIPES_TIP, SourcesPane
from app.ui.phone.phone_watch import PhoneWatch


class PhonePage(QWidget):
    message = Signal(str)
    problem = Signal(str)  # something failed: said longer than a message

    def __init__(
        self, desk: PhoneDesk, pair: PairSelection | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.desk = desk  # built once by the window (the CLI uses the same service)
        self.pair = pair  # the Pair page's target and draft: Push Pair pushes them
        self.watch = PhoneWatch(desk, self)  # phones, the folder shown, library packs
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

        left = SourcesPane()
        # The pane's parts, as the page's (tests and screenshots reach them here).
        self.device_list, self.device_hint = left.device_list, left.device_hint
        self.pack_list, self.recipes_hint = left.pack_list, left.recipes_hint
        self.push_button, self.recipes_button = left.push_button, left.recipes_button
        self.pair_button, self.pair_label = left.pair_button, left.pair_label

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
        self.check = PhoneCheckPanel()  # the selected phone pack's recipes, link and RAM
        right_layout.addWidget(self.check)
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

        # What the selected phone gave in TokForge, each with the forecast made before.
        self.results = PhoneResultsPanel(self.watch)
        self.results.message.connect(self.message)
        # Side by side, so the page still fits a 700-pixel-high window.
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.push_queue)
        bottom.addWidget(self.results)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(bottom)
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
        self.pair_button.clicked.connect(self.push_pair)
        self.check.match_button.clicked.connect(self.match_selected)
        self.refresh_button.clicked.connect(self.refresh_phone)
        self.delete_button.clicked.connect(self.delete_selected)
        self.packs_view.selectionModel().selectionChanged.connect(self._update_buttons)

        self.watch.devices_changed.connect(self._on_devices)
        self.watch.devices_failed.connect(self.device_hint.setText)
        self.watch.folder_changed.connect(self._on_folder)
        self.watch.folder_failed.connect(self.free_label.setText)
        self.watch.library_changed.connect(self._on_library)
        self.watch.library_failed.connect(lambda error: show_error(self, "Phone", error))
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

    @property
    def devices(self) -> list[DeviceInfo]:
        return self.watch.devices

    @property
    def listed(self) -> PhoneFolder | None:
        """The phone folder whose packs are shown (None while read, or none)."""
        return self.watch.listed

    def _on_devices(self, stable: list[DeviceInfo]) -> None:
        self.device_list.show_devices(stable)
        self.push_queue.model.name_phones(stable)
        self._show_device_hint()

    def _phone_name(self, serial: str) -> str:
        """What the user calls the phone: its model (an address only until it is known)."""
        return self.push_queue.model.phone_name(serial)

    def selected_device(self) -> DeviceInfo | None:
        serial = self.device_list.selected_serial()
        return self.watch.device(serial)

    def _show_device_hint(self) -> None:
        self.device_hint.setText(device_hint(self.devices, self.selected_device()))

    def _on_device_changed(self) -> None:
        self.results.show_device(self.selected_device())
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
        shown = self._shown_folder()
        device = self.selected_device()
        self.watch.read_folder(shown)
        if device is not None and shown is not None:
            self.free_label.setText(f"Reading {shown[1]} on {device.title}…")

    def _on_folder(self, folder: PhoneFolder | None) -> None:
        self.packs_model.set_packs(folder.packs if folder is not None else [])
        self._update_buttons()
        if folder is None:
            if self._shown_folder() is None:
                self.free_label.setText("")
            return
        free = folder.free
        space = "folder not created yet" if free is None else f"{format_bytes(free)} free"
        self.free_label.setText(f"{counted(len(folder.packs), 'pack')} in {folder.root} · {space}")

    def selected_phone_pack(self) -> PhonePack | None:
        rows = self.packs_view.selectionModel().selectedRows()
        return self.packs_model.packs[rows[0].row()] if rows else None

    def delete_selected(self) -> None:
        pack, listed = self.selected_phone_pack(), self.listed
        if pack is None or listed is None:
            return
        serial, root = listed.serial, listed.root
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
        device = self.watch.device(serial)
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

    def _on_library(self) -> None:
        self.pack_list.show_packs(self.watch.packs)
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
            self.listed is not None and self.selected_phone_pack() is not None
        )
        self.refresh_button.setEnabled(ready)
        pair = chosen_pair(self.pair)
        self.pair_label.setText(pair_words(pair))
        self.pair_button.setEnabled(ready and pair is not None)
        self.check.show_pack(self.selected_phone_pack())

    def _recipes_why_not(self) -> str:
        """Why the selected pack's recipes cannot go to the selected phone now ("" if they
        can): recipes alone are only ever written into the pack already there."""
        device, pack, shown = self.selected_device(), self.pack_list.selected_path(), None
        if device is None or pack is None or (shown := self._shown_folder()) is None:
            return "Choose a phone and a pack"
        return recipes_refusal(device, pack.name, shown[1], self.listed)

    def push_selected(self, _checked: bool = False, recipe_only: bool = False) -> PushJob | None:
        device, pack = self.selected_device(), self.pack_list.selected_path()
        if device is None or pack is None or not device.ready:
            return None
        if recipe_only and self._recipes_why_not():  # the button is off: so is the key
            return None
        serial, root = device.serial, self.destinations.root()
        linked, draft = pair_step(pack, chosen_pair(self.pair), self.listed, serial, root)
        if draft is None or recipe_only:  # recipes alone: the link the phone has stays
            return self.start_push(serial, pack, recipe_only, draft=linked)
        ask_push_both(
            self,
            f"{pack.name} drafts with {draft.name} (the pair chosen on the Pair page), which "
            f"is not on {device.title} in {root}. Push it too, so the target's config.json "
            "on the phone names it?",
            lambda: self._push_pair(serial, pack, draft),
            lambda: self.start_push(serial, pack, False),
        )
        return None

    def push_pair(self) -> PushJob | None:
        """Push the Pair page's draft, then its target linked to it."""
        device, pair = self.selected_device(), chosen_pair(self.pair)
        if device is None or not device.ready or pair is None:
            return None
        return self._push_pair(device.serial, *pair)

    def _push_pair(self, serial: str, target: Path, draft: Path) -> PushJob:
        root = self.destinations.root()
        _first, job = self.desk.push_pair(serial, target, draft, root)
        self.refresh_queue()
        self.push_queue.model.follow(self.push_queue.view, job)
        self.message.emit(f"Pushing {draft.name} and {target.name} to {self._phone_name(serial)}")
        return job

    def match_selected(self) -> PushJob | None:
        """Push the library's recipes of the selected phone pack (the phone-side check
        found keys that differ); the draft its config.json names stays named."""
        pack, listed = self.selected_phone_pack(), self.listed
        found = self.watch.library.get(pack.name) if pack is not None else None
        if found is None or listed is None:
            return None
        return self.start_push(listed.serial, found.path, recipe_only=True)

    def push_recipes_selected(self) -> PushJob | None:
        return self.push_selected(recipe_only=True)

    def _on_pack_dropped(self, serial: str, folder: str) -> None:
        device = self.watch.device(serial)
        if device is None or not device.ready:
            show_error(self, "Phone not ready", device.guidance if device else NO_DEVICES)
            return
        self.start_push(serial, Path(folder), recipe_only=False)

    def start_push(
        self, serial: str, pack: Path, recipe_only: bool, draft: Path | None = None
    ) -> PushJob:
        """Queue a push to the folder shown (the one already queued, if it is); with
        `draft`, the target's config.json on the phone names that draft."""
        job = self.desk.push(serial, pack, self.destinations.root(), recipe_only, draft=draft)
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
        news = push_news(status, self._phone_name(status.serial))
        if news is not None:
            (self.problem if news.problem else self.message).emit(news.text)
        folder = changed_folder(status)
        if folder is not None and folder == self._shown_folder():
            self.refresh_phone()

    # -- lifecycle ---------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        self._update_buttons()  # the pair may have been chosen on the Pair page since
        self.watch.reload_library()
        self.watch.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self.watch.stop()
        super().hideEvent(event)

    def shutdown(self) -> None:
        """Stop watching the phones and drop answers still on their way (the window is
        closing; it stops the desk's pushes itself)."""
        self.watch.close()
        background.close_owner(self)
