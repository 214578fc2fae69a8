"""The Library page: installed packs, their details, add / import / remove."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QItemSelection, QObject, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QContextMenuEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.core.infra.errors import FileError
from app.core.infra.units import counted, format_bytes
from app.core.pack.library import Library, PackEntry
from app.ui.base import background
from app.ui.base.dialogs import ask, show_file_error
from app.ui.base.fitted_table import CELLS, READABLE, ElideDelegate, FittedTable
from app.ui.base.labels import wrap_to_width
from app.ui.base.open_folder import open_folder
from app.ui.base.placeholder_edit import PlaceholderEdit
from app.ui.library.library_menu import pack_menu
from app.ui.library.library_model import COLUMNS, ENTRY_ROLE, LibraryModel
from app.ui.library.pack_details import PackDetails
from app.ui.library.zip_imports import ZipImports

log = logging.getLogger("draftdeck.ui.library")


class _SortedByModel(QSortFilterProxyModel):
    """Filters the packs; sorting is the model's (LibraryModel.sort)."""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)


class LibraryPage(QWidget):
    """Lists installed packs; emits `message` for the status bar."""

    message = Signal(str)
    use_in_pair = Signal(str, Path)  # ("target" or "draft", the pack's folder)
    measure_pack = Signal(Path)  # a draft pack's folder: measure it against targets

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.model = LibraryModel()
        self.proxy = _SortedByModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)

        title = QLabel("Library")
        title.setObjectName("pageTitle")
        hint = QLabel(
            "Packs installed on this computer, read straight from their MNN bundles. "
            "Drop a pack folder or .zip anywhere on the window to add it."
        )
        hint.setObjectName("pageHint")
        wrap_to_width(hint)

        self.filter_edit = PlaceholderEdit()  # the whole placeholder, key included
        self.filter_edit.setPlaceholderText("Filter packs (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)

        self.toolbar = QToolBar()
        self.act_add = self._action("&Add Folder…", "Ctrl+O", self.choose_folder)
        self.act_add.setStatusTip("Add a pack folder")
        self.act_import = self._action("&Import Zip…", "Ctrl+I", self.choose_zip)
        self.act_import.setStatusTip("Import a zipped pack")
        self.act_remove = self._action(
            "&Remove…", QKeySequence.StandardKey.Delete, self.remove_selected
        )
        self.act_remove.setStatusTip("Remove the selected pack (asks first)")
        self.act_refresh = self._action("Re&fresh", QKeySequence.StandardKey.Refresh, self.reload)
        self.act_refresh.setStatusTip("Re-read the library")
        self.act_open = self._action("Open &Location", "Ctrl+L", self.open_selected_location)
        self.act_open.setStatusTip("Open the selected pack's folder")
        # Keys that act on the selected pack work while this page has the focus: other
        # pages (the Phone page's F5 and Delete) have their own meaning for them.
        for action in (self.act_remove, self.act_refresh, self.act_open):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(action)
        focus_filter = QAction("Filter the list", self)  # named for Help's key list
        focus_filter.setShortcut(QKeySequence.StandardKey.Find)
        focus_filter.triggered.connect(self.filter_edit.setFocus)
        self.addAction(focus_filter)

        # Path gives way first, down to its pack folder (elided at the start), then
        # Status, down to the file it is about (elided at the end), both whole in their
        # tooltips; then Quantization's long header. Never the names, which are what a
        # user reads: the table scrolls instead.
        path_column, status_column = COLUMNS.index("Path"), COLUMNS.index("Status")
        self.table = FittedTable(
            (
                (path_column, READABLE),
                (status_column, READABLE),
                (COLUMNS.index("Quantization"), CELLS),
            )
        )
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setItemDelegateForColumn(
            path_column, ElideDelegate(Qt.TextElideMode.ElideLeft, self.table)
        )
        self.table.verticalHeader().setVisible(False)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        # Right click on a pack (the viewport's event), or the menu key / Shift+F10 on
        # the selected one (the table's, which has the focus).
        self.table.installEventFilter(self)
        self.table.viewport().installEventFilter(self)

        self.details = PackDetails()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        self.zip_imports = ZipImports(library, self)
        self.zip_imports.imported.connect(lambda entry: self._show_added([entry]))
        self.zip_imports.message.connect(self.message)
        # The row's parts, as the page's (tests and screenshots reach them here).
        self.import_row, self.import_bar = self.zip_imports, self.zip_imports.bar
        self.import_label, self.import_cancel = (
            self.zip_imports.label,
            self.zip_imports.cancel_button,
        )

        top = QHBoxLayout()
        top.addWidget(self.toolbar)
        top.addStretch(1)
        top.addWidget(self.filter_edit)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(hint)
        layout.addLayout(top)
        layout.addWidget(self.import_row)
        layout.addWidget(splitter, 1)
        self._update_actions()

    def _action(
        self, text: str, shortcut: str | QKeySequence.StandardKey, slot: Callable[[], object]
    ) -> QAction:
        action = QAction(text, self)
        action.setShortcut(shortcut)
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        self.toolbar.addAction(action)
        return action

    # -- reading --------------------------------------------------------------------------

    def reload(self, select: Path | None = None) -> None:
        """Re-read the library on a worker thread (only packs whose files changed are
        read again); the rows change when it is done, `select`ed if given."""
        background.run(
            self,
            "scan",
            self.library.scan,
            on_done=lambda entries: self._show_entries(entries, select),
            on_error=self._on_scan_failed,
        )

    def loading(self) -> bool:
        """Whether a reading of the library is on its way to the page."""
        return background.is_running(self, "scan")

    def refresh(self) -> None:
        """Re-read the library now, on this thread (a pack's stamp, not its bundle, when
        its files did not change)."""
        background.drop(self, "scan")
        self._show_entries(self.library.scan())

    def event(self, event: QEvent) -> bool:
        # Back in the window after a command changed a pack (`draftdeck verify-export`
        # writes its export check): read again what changed, without F5. Only the
        # folders whose files changed are read (Library.scan), once per activation; the
        # window passes the event to its visible children only, so a hidden page waits.
        if event.type() == QEvent.Type.WindowActivate and not self.loading():
            self._rescan()
        return super().event(event)

    def _rescan(self) -> None:
        background.run(self, "scan", self.library.scan, self._on_rescanned, self._on_scan_failed)

    def _outdate_scan(self) -> None:
        """Rows were added or removed here: a reading begun before would put them back
        as they were, so the library is read again (its answer replaces that one's)."""
        if self.loading():
            self._rescan()

    def _on_rescanned(self, entries: list[PackEntry]) -> None:
        """Rows again only if a pack was read again (or came or went): the same readings
        keep the table, its selection and its scroll as they are. No count in the status
        bar: the user did not ask, and it would cover what they did ask."""
        if {id(e) for e in entries} != {id(e) for e in self.model.entries()}:
            self._show_entries(entries, say=False)

    def _on_scan_failed(self, error: Exception) -> None:
        log.error("could not read the library", exc_info=error)
        self.message.emit(f"Could not read the library: {error}")

    def _show_entries(
        self, entries: list[PackEntry], select: Path | None = None, say: bool = True
    ) -> None:
        selected = self.selected_entry()
        self.model.set_entries(entries)
        keep = select or (selected.path if selected is not None else None)
        if keep is not None:
            self.select_path(keep)
        self._show_details()
        self._update_actions()
        if not say:
            return
        broken = sum(not e.ok for e in entries)
        total = sum(e.info.size_bytes for e in entries if e.info)
        note = f", {broken} with problems" if broken else ""
        doubtful = sum(e.export_doubtful for e in entries)
        note += f", {counted(doubtful, 'export')} not verified" if doubtful else ""
        self.message.emit(f"{counted(len(entries), 'pack')} ({format_bytes(total)}){note}")

    def selected_entry(self) -> PackEntry | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        entry = rows[0].data(ENTRY_ROLE)
        return entry if isinstance(entry, PackEntry) else None

    def select_path(self, path: Path) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            entry = index.data(ENTRY_ROLE)
            if isinstance(entry, PackEntry) and entry.path == path:
                self.table.selectRow(row)
                self.table.scrollTo(index)
                return

    def _on_selection_changed(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        self._show_details()
        self._update_actions()

    def _show_details(self) -> None:
        entry = self.selected_entry()
        if entry is None and self.model.rowCount() == 0:
            self.details.show_empty_library(self.library.root)
        else:
            self.details.show_entry(entry)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            self._show_pack_menu(event)
            return True
        return super().eventFilter(watched, event)

    def _show_pack_menu(self, event: QContextMenuEvent) -> None:
        """The pack under the pointer, or from the keyboard the selected one, and what
        can be done with it."""
        viewport = self.table.viewport()
        if event.reason() == QContextMenuEvent.Reason.Mouse:
            index = self.table.indexAt(event.pos())
            if not index.isValid():
                return
            self.table.selectRow(index.row())
            at = event.pos()
        else:
            rows = self.table.selectionModel().selectedRows()
            if not rows:
                return
            at = self.table.visualRect(rows[0]).center()
        entry = self.selected_entry()
        if entry is None:
            return
        actions = [self.act_open, self.act_remove]
        menu = pack_menu(
            self, entry, actions, self.use_in_pair.emit, self.message.emit, self.measure_pack.emit
        )
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(viewport.mapToGlobal(at))

    def _update_actions(self) -> None:
        has = self.selected_entry() is not None
        self.act_remove.setEnabled(has)
        self.act_open.setEnabled(has)

    # -- changing -------------------------------------------------------------------------

    def choose_library_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Choose the library folder", str(self.library.root)
        )
        if folder:
            self.set_library_folder(Path(folder))

    def set_library_folder(self, folder: Path) -> None:
        """Keep installed packs in another folder (packs already there are not moved)."""
        self.library.set_root(folder)
        self.reload()
        self.message.emit(f"Library folder: {folder}")

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a pack folder")
        if folder:
            self.add_paths([Path(folder)])

    def choose_zip(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Import a zipped pack", "", "Zip files (*.zip)")
        if name:
            self.add_paths([Path(name)])

    def add_paths(self, paths: list[Path]) -> None:
        """Add dropped or chosen folders (by reference) and zip files (unpacked in the
        background)."""
        added: list[PackEntry] = []
        zips: list[Path] = []
        for path in paths:
            if path.is_file() and path.suffix.lower() == ".zip":
                zips.append(path)
                continue
            try:
                added.extend(self.library.add_folder(path))
            except FileError as exc:
                log.warning("could not add %s: %s", path, exc)
                show_file_error(self, "Could not add pack", exc)
        self._show_added(added)
        for archive in zips:
            self.zip_imports.add(archive)

    def importing(self) -> bool:
        return self.zip_imports.running()

    def cancel_imports(self) -> None:
        """Stop the running zip import and drop the ones waiting."""
        self.zip_imports.cancel()

    def _show_added(self, added: list[PackEntry]) -> None:
        if not added:
            return
        self._outdate_scan()
        # The library already read the new packs: add their rows, no full re-scan.
        self.model.add_entries(added)
        self.select_path(added[-1].path)
        names = ", ".join(e.name for e in added)
        self.message.emit(f"Added {names}")

    def remove_selected(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            return
        if entry.by_reference:
            question = (
                f"Remove “{entry.name}” from the library?\n\n"
                f"The folder stays on disk at {entry.path}."
            )
            yes = "Remove"
        else:
            size = format_bytes(entry.info.size_bytes) if entry.info else "its files"
            question = (
                f"Delete “{entry.name}” from the library?\n\n"
                f"This deletes the folder {entry.path} ({size}) from disk."
            )
            yes = "Delete"
        ask(self, "Remove pack", question, yes, lambda: self._remove(entry))

    def _remove(self, entry: PackEntry) -> None:
        try:
            self.library.remove(entry)
        except FileError as exc:
            show_file_error(self, "Could not remove pack", exc)
            return
        self._outdate_scan()
        self.model.remove_entry(entry)
        self._show_details()
        self._update_actions()
        self.message.emit(f"Removed {entry.name}")

    def open_selected_location(self) -> None:
        entry = self.selected_entry()
        if entry is not None and (problem := open_folder(entry.path)):
            self.message.emit(problem)
