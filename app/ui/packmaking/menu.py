"""The File menu's Make Pack…, Measure Pack… and Publish to Hugging Face…: one dialog of
each at a time, not modal (an export or a measuring takes minutes; the window stays
usable). Each step offers the next: a made draft its measuring, a measured pack its
publishing."""

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
from app.ui.packmaking.measure_pack_dialog import MeasurePackDialog
from app.ui.packmaking.publish_dialog import PublishDialog


class PackMakingActions(QObject):
    def __init__(
        self,
        window: QWidget,
        library: Library,
        settings: Settings,
        selected_pack: Callable[[], Path | None],
        on_made: Callable[[Path], None],
        measuring_elsewhere: Callable[[], str] = lambda: "",
    ) -> None:
        """`on_made`: a pack was made or its files written (the Library shows it again);
        `measuring_elsewhere`: what else measures now ("" when nothing does)."""
        super().__init__(window)
        self._window, self._library, self._settings = window, library, settings
        self._selected_pack, self._on_made = selected_pack, on_made
        self._elsewhere = measuring_elsewhere
        self.make_dialog: MakePackDialog | None = None
        self.measure_dialog: MeasurePackDialog | None = None
        self.publish_dialog: PublishDialog | None = None
        self.act_make = QAction("&Make Pack…", window)
        self.act_make.setStatusTip("Export a Hugging Face model to an MNN pack and verify it")
        self.act_make.triggered.connect(self.open_make_pack)
        self.act_measure = QAction("Mea&sure Pack…", window)
        self.act_measure.setStatusTip(
            "Measure a draft against targets and write its runtime_config.json and card"
        )
        self.act_measure.triggered.connect(lambda: self.open_measure())
        self.act_publish = QAction("&Publish to Hugging Face…", window)
        self.act_publish.setStatusTip("Upload a pack with its model card to a Hub repository")
        self.act_publish.triggered.connect(lambda: self.open_publish())
        self.actions = [self.act_make, self.act_measure, self.act_publish]

    def open_make_pack(self) -> MakePackDialog:
        if self.make_dialog is None:
            hub = HubConfig.from_settings(self._settings)
            dialog = self.make_dialog = MakePackDialog(self._library, hub, self._window)
            dialog.made.connect(self._on_made)
            dialog.measure_requested.connect(self.open_measure)
            self._keep_until_closed(dialog, "make_dialog")
        self.make_dialog.show()
        self.make_dialog.activateWindow()
        return self.make_dialog

    def measuring(self) -> bool:
        """Whether Measure Pack is measuring now."""
        return self.measure_dialog is not None and self.measure_dialog.running()

    def open_measure(self, draft: Path | None = None) -> MeasurePackDialog:
        """The dialog on `draft` (default: the Library's selected pack, if a draft)."""
        if self.measure_dialog is None:
            dialog = self.measure_dialog = MeasurePackDialog(
                self._library,
                draft or self._selected_pack(),
                measuring_elsewhere=self._elsewhere,
                parent=self._window,
            )
            dialog.written.connect(self._on_made)
            dialog.publish_requested.connect(self.open_publish)
            self._keep_until_closed(dialog, "measure_dialog")
        elif draft is not None:
            self.measure_dialog.choose_draft(draft)
        self.measure_dialog.show()
        self.measure_dialog.activateWindow()
        return self.measure_dialog

    def open_publish(self, folder: Path | None = None) -> PublishDialog:
        """The dialog on `folder` (default: the Library's selected pack)."""
        if self.publish_dialog is None:
            selected = folder or self._selected_pack()
            dialog = self.publish_dialog = PublishDialog(self._settings, selected, self._window)
            self._keep_until_closed(dialog, "publish_dialog")
        elif folder is not None and not self.publish_dialog.running():
            self.publish_dialog.folder_edit.setText(str(folder))
        self.publish_dialog.show()
        self.publish_dialog.activateWindow()
        return self.publish_dialog

    def _keep_until_closed(self, dialog: QDialog, name: str) -> None:
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _result: setattr(self, name, None))
