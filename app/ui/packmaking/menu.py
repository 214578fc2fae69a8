"""The File menu's Make Pack… and Publish to Hugging Face…: one dialog of each at a time,
not modal (an export takes minutes; the window stays usable)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QWidget

from app.core.hub.hub_api import HubConfig
from app.core.infra.settings import Settings
from app.core.pack.library import Library
from app.ui.packmaking.make_pack_dialog import MakePackDialog
from app.ui.packmaking.publish_dialog import PublishDialog


class PackMakingActions(QObject):
    def __init__(
        self,
        window: QWidget,
        library: Library,
        settings: Settings,
        selected_pack: Callable[[], Path | None],
        on_made: Callable[[Path], None],
    ) -> None:
        super().__init__(window)
        self._window, self._library, self._settings = window, library, settings
        self._selected_pack, self._on_made = selected_pack, on_made
        self.make_dialog: MakePackDialog | None = None
        self.publish_dialog: PublishDialog | None = None
        self.act_make = QAction("&Make Pack…", window)
        self.act_make.setStatusTip("Export a Hugging Face model to an MNN pack and verify it")
        self.act_make.triggered.connect(self.open_make_pack)
        self.act_publish = QAction("&Publish to Hugging Face…", window)
        self.act_publish.setStatusTip("Upload a pack with its model card to a Hub repository")
        self.act_publish.triggered.connect(self.open_publish)
        self.actions = [self.act_make, self.act_publish]

    def open_make_pack(self) -> MakePackDialog:
        if self.make_dialog is None:
            hub = HubConfig.from_settings(self._settings)
            dialog = self.make_dialog = MakePackDialog(self._library, hub, self._window)
            dialog.made.connect(self._on_made)
            self._keep_until_closed(dialog, "make_dialog")
        self.make_dialog.show()
        self.make_dialog.activateWindow()
        return self.make_dialog

    def open_publish(self) -> PublishDialog:
        if self.publish_dialog is None:
            selected = self._selected_pack()
            dialog = self.publish_dialog = PublishDialog(self._settings, selected, self._window)
            self._keep_until_closed(dialog, "publish_dialog")
        self.publish_dialog.show()
        self.publish_dialog.activateWindow()
        return self.publish_dialog

    def _keep_until_closed(self, dialog: QDialog, name: str) -> None:
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _result: setattr(self, name, None))
