"""The Library page's zip imports: zips unpack in the background, one at a time, in a row
with the zip's name, a bar and a Cancel button (shown only while one unpacks)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.core.infra.errors import FileError
from app.core.pack.library import ImportCancelled, Library, PackEntry
from app.ui.base import background
from app.ui.base.dialogs import show_error, show_file_error
from app.ui.base.labels import wrap_to_width

log = logging.getLogger("draftdeck.ui.library")


class ZipImports(QWidget):
    imported = Signal(object)  # the PackEntry a zip became
    message = Signal(str)
    # Permille of the running import; emitted from the import's thread.
    _progress = Signal(int)

    def __init__(self, library: Library, owner: QWidget) -> None:
        super().__init__(owner)
        self.library = library
        self._owner = owner  # whose background work the import is (closed with its page)
        self._zips: list[Path] = []
        self._cancel = threading.Event()
        self.label = wrap_to_width(QLabel())  # the zip's name may be long
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel Import")
        self.cancel_button.clicked.connect(self.cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.cancel_button)
        self.hide()
        self._progress.connect(self.bar.setValue)

    def add(self, archive: Path) -> None:
        """Queue a zip; it unpacks once the ones before it have."""
        self._zips.append(archive)
        self._next()

    def running(self) -> bool:
        return background.is_running(self._owner, "import")

    def cancel(self) -> None:
        """Stop the running import and drop the ones waiting."""
        self._zips.clear()
        self._cancel.set()

    def _next(self) -> None:
        if self.running():
            return
        if not self._zips:
            self.hide()
            return
        archive = self._zips.pop(0)
        cancel = self._cancel = threading.Event()
        emit = self._progress.emit

        def unpack() -> PackEntry:
            return self.library.import_zip(
                archive, lambda done, total: emit(done * 1000 // max(total, 1)), cancel
            )

        self.label.setText(f"Importing {archive.name}…")
        self.bar.setValue(0)
        self.show()
        background.run(
            self._owner,
            "import",
            unpack,
            on_done=self._on_imported,
            on_error=lambda exc: self._on_failed(archive, exc),
        )

    def _on_imported(self, entry: PackEntry) -> None:
        self.imported.emit(entry)
        self._next()

    def _on_failed(self, archive: Path, exc: Exception) -> None:
        if isinstance(exc, ImportCancelled):
            self.message.emit(f"Import of {archive.name} cancelled")
        elif isinstance(exc, FileError):
            log.warning("could not import %s: %s", archive, exc)
            show_file_error(self._owner, "Could not add pack", exc)
        else:
            log.error("could not import %s", archive, exc_info=exc)
            show_error(self._owner, "Could not add pack", f"{archive}: {exc}")
        self._next()
