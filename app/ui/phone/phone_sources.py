"""The Phone page's left pane: the attached phones, the library's packs and the buttons
that push one to the other."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.phone.adb import NO_DEVICES
from app.ui.base.labels import wrap_to_width
from app.ui.phone.phone_models import DeviceList, PackList
from app.ui.phone.phone_pair import NO_PAIR, PAIR_TIP

RECIPES_TIP = "Copy only the pack's recipe files (quick tuning loop)"


class SourcesPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        self.pair_label = wrap_to_width(QLabel(NO_PAIR))
        self.pair_label.setObjectName("pairToPush")
        self.pair_button = QPushButton("Push Pair")
        self.pair_button.setToolTip(PAIR_TIP)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Phones"))
        layout.addWidget(self.device_list, 2)
        layout.addWidget(self.device_hint)
        layout.addWidget(QLabel("Library packs (drag one onto a phone)"))
        layout.addWidget(self.pack_list, 3)
        # Above the buttons, which stay at the foot of the pane: a note that comes with
        # a selection takes its room from the list, never moves a button under the pointer.
        layout.addWidget(self.recipes_hint)
        buttons = QHBoxLayout()
        buttons.addWidget(self.push_button)
        buttons.addWidget(self.recipes_button)
        layout.addLayout(buttons)
        layout.addWidget(self.pair_label)
        layout.addWidget(self.pair_button)
