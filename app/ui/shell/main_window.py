"""The main window: a sidebar of pages and the stack that shows them."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QWidget,
)

from app import __version__
from app.core.hub.downloads import Downloads
from app.core.infra.guide_files import guide_folder
from app.core.infra.paths import app_dirs
from app.core.infra.settings import Settings, unwritable_folders
from app.core.infra.system_figures import system_figures
from app.core.measure.measure_lock import measuring_elsewhere
from app.core.measure.ram_estimate import estimate_model
from app.core.pack.library import Library
from app.core.phone.desk import PhoneDesk
from app.engine.client.tune_sweeps import TuneSweeps
from app.ui.base import background
from app.ui.base.dialogs import ask
from app.ui.base.engine_bridge import EngineBridge
from app.ui.base.open_folder import open_folder
from app.ui.base.pair_selection import PairSelection
from app.ui.base.settings_saver import SettingsSaver
from app.ui.chat.chat_page import ChatPage
from app.ui.downloads.downloads_page import DownloadsPage
from app.ui.library.library_page import LibraryPage
from app.ui.packmaking.menu import PackMakingActions
from app.ui.pair.pair_page import PairPage
from app.ui.phone.phone_page import PhonePage
from app.ui.recipes.recipes_page import RecipesPage
from app.ui.shell.first_size import first_geometry
from app.ui.shell.shortcuts import ShortcutsDialog, page_actions
from app.ui.shell.user_guide import UserGuideDialog
from app.ui.tune.tune_page import TunePage

log = logging.getLogger("draftdeck.ui")
FACTS_TIP = (
    "CPU (system): the load of the whole machine, every program included. Engine RAM: the "
    "memory the engine worker holds while a pair is loaded."
)


def _dropped_paths(urls: list[QUrl]) -> list[Path]:
    paths = [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]
    return [p for p in paths if p.is_dir() or p.suffix.lower() == ".zip"]


class MainWindow(QMainWindow):
    # How long the status bar keeps a message: a problem longer, or until the page changes.
    info_ms = 10_000
    problem_ms = 30_000

    def __init__(
        self,
        settings: Settings,
        library: Library,
        saver: SettingsSaver,
        icon: QIcon | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.library = library
        self._save_settings = saver
        # "[*]" shows the platform's unsaved mark (a "*", or the dot in macOS's close
        # button) while a recipe has unsaved edits.
        self.setWindowTitle("DraftDeck[*]")
        if icon is not None:
            self.setWindowIcon(icon)
        self.setAcceptDrops(True)
        self._closing_anyway = False
        self._problem = ""  # the problem the status bar shows, if it shows one

        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setFixedWidth(170)
        self.stack = QStackedWidget()
        self.pages: dict[str, QWidget] = {}

        self.selection = PairSelection(settings, saver)
        # The services the pages show, built once here: a page never builds its own, and
        # the window's close shuts them down (shutdown).
        self.downloads = Downloads(library)
        self.phone_desk = PhoneDesk(library, estimate=estimate_model)  # the push's RAM check
        self.tune_sweeps = TuneSweeps()
        self.engine = EngineBridge()  # the Chat page talks to it; the status bar reads its pid
        self._add_pages()
        self._build_status_bar()

        self.sidebar.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.sidebar.currentRowChanged.connect(self._clear_problem)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.sidebar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self._build_menus()
        self.statusBar()
        self._restore_state()
        self.library_page.reload()  # on a worker thread: the window paints at once
        saver.failed.connect(self._on_unsaved)
        saver.saved.connect(self.unsaved_label.hide)
        # Said once, at start: a settings file set aside, folders that refuse writes.
        problems = [settings.load_problem] if settings.load_problem else []
        problems += unwritable_folders(settings)
        if problems:
            self._show_problem("; ".join(problems))

    def _add_pages(self) -> None:
        self.library_page = LibraryPage(self.library)
        self.library_page.message.connect(self._show_message)
        self.add_page("library", "Library", self.library_page)
        self.downloads_page = DownloadsPage(self.downloads)
        self.downloads_page.message.connect(self._show_message)
        self.downloads_page.problem.connect(self._show_problem)
        self.downloads_page.installed.connect(self._on_pack_installed)
        self.add_page("downloads", "Downloads", self.downloads_page)
        self.pair_page = PairPage(self.library, self.selection, desk=self.phone_desk)
        self.add_page("pair", "Pair", self.pair_page)
        self.library_page.use_in_pair.connect(self._use_in_pair)
        self.recipes_page = RecipesPage(self.selection)
        self.recipes_page.unsaved_changed.connect(self.setWindowModified)
        # Every choice of pair (Pair page, matrix, Library, a conversation's Switch Pair)
        # asks the Recipes page first: its unsaved edits are of the pair in use.
        self.selection.confirm = lambda wanted, go_on, keep: self.recipes_page.confirm_pair_change(
            self, wanted, go_on, keep
        )
        self.add_page("recipes", "Recipes", self.recipes_page)
        self.chat_page = ChatPage(self.selection, self.engine, settings=self.settings)
        self.add_page("chat", "Chat", self.chat_page)
        self.tune_page = TunePage(
            self.selection,
            self.tune_sweeps,
            measuring_elsewhere=lambda: (
                "a pack is being measured (Measure Pack)"
                if self.pack_making.measuring()
                else measuring_elsewhere()
            ),
        )
        self.add_page("tune", "Tune", self.tune_page)
        for page in (self.recipes_page, self.chat_page, self.tune_page):
            page.needs_pair.go_to_pair.connect(lambda: self.show_page("pair"))
        self.phone_page = PhonePage(self.phone_desk, self.selection)
        self.phone_page.message.connect(self._show_message)
        self.phone_page.problem.connect(self._show_problem)
        self.add_page("phone", "Phone", self.phone_page)

    def _build_status_bar(self) -> None:
        self.unsaved_label = QLabel("Settings not saved")
        self.unsaved_label.setObjectName("warning")
        self.unsaved_label.hide()
        self.statusBar().addPermanentWidget(self.unsaved_label)
        self.facts_label = QLabel()  # short figures; wrapping here made the bar grow
        self.facts_label.setToolTip(FACTS_TIP)
        self.statusBar().addPermanentWidget(self.facts_label)
        self._facts_timer = QTimer(self)
        self._facts_timer.setInterval(1000)
        self._facts_timer.timeout.connect(self._on_facts_timer)
        self._facts_timer.start()

    def add_page(self, key: str, title: str, page: QWidget) -> None:
        self.pages[key] = page
        item = QListWidgetItem(title)
        item.setData(Qt.ItemDataRole.UserRole, key)
        self.sidebar.addItem(item)
        self.stack.addWidget(page)

    def show_page(self, key: str) -> None:
        keys = list(self.pages)
        if key in keys:
            self.sidebar.setCurrentRow(keys.index(key))

    def current_page_key(self) -> str:
        return list(self.pages)[max(self.sidebar.currentRow(), 0)]

    def _build_menus(self) -> None:
        page = self.library_page
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(page.act_add)
        file_menu.addAction(page.act_import)
        file_menu.addSeparator()
        selected = page.selected_entry
        self.pack_making = PackMakingActions(
            self,
            self.library,
            self.settings,
            lambda: entry.path if (entry := selected()) is not None else None,
            lambda path: self._on_pack_installed(str(path)),
            lambda: (
                "a Tune sweep is measuring" if self.tune_sweeps.running() else measuring_elsewhere()
            ),
        )
        page.measure_pack.connect(self.pack_making.open_measure)
        file_menu.addActions(self.pack_making.actions)
        file_menu.addSeparator()
        library_folder = QAction("&Library Folder…", self)
        library_folder.triggered.connect(page.choose_library_folder)
        file_menu.addAction(library_folder)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut("Ctrl+Q")
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        pack_menu = self.menuBar().addMenu("&Pack")
        for action in (page.act_refresh, page.act_open, page.act_remove):
            pack_menu.addAction(action)
        view_menu = self.menuBar().addMenu("&View")
        view_menu.addActions(page_actions(self, self._page_titles(), self.show_page))
        help_menu = self.menuBar().addMenu("&Help")
        guide = QAction("&User Guide", self)
        guide.setShortcut(QKeySequence.StandardKey.HelpContents)
        guide.setStatusTip("Read the user guide (offline)")
        guide.triggered.connect(self.show_user_guide)
        help_menu.addAction(guide)
        keys = QAction("&Keyboard Shortcuts", self)
        keys.setShortcut(QKeySequence("Ctrl+/"))
        keys.setStatusTip("List every key and what it does")
        keys.triggered.connect(self.show_shortcuts)
        help_menu.addAction(keys)
        logs = QAction("Open &Log Folder", self)
        logs.triggered.connect(self._open_log_folder)
        help_menu.addAction(logs)
        about = QAction("&About DraftDeck", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

    def _page_titles(self) -> dict[str, str]:
        return {key: self.sidebar.item(row).text() for row, key in enumerate(self.pages)}

    def show_user_guide(self) -> UserGuideDialog:
        """The guide's window: one, brought forward again when it is open already."""
        dialog = self.findChild(UserGuideDialog)
        if dialog is None:
            dialog = UserGuideDialog(self, guide_folder())
        dialog.show()
        dialog.activateWindow()
        return dialog

    def show_shortcuts(self) -> ShortcutsDialog:
        titles = self._page_titles()
        dialog = ShortcutsDialog(self, {titles[key]: page for key, page in self.pages.items()})
        dialog.open()
        return dialog

    def _about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("About DraftDeck")
        box.setText(
            f"<b>DraftDeck {__version__}</b><br>"
            "A workbench for speculative decoding with MNN draft packs.<br><br>"
            f"Library: {self.library.root}<br>Logs: {app_dirs().log}"
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _use_in_pair(self, role: str, path: Path) -> None:
        self.show_page("pair")  # it re-reads the library and the pair when shown
        self.pair_page.use_as(role, path)

    def _on_pack_installed(self, path: str) -> None:
        self.library_page.refresh()
        self.library_page.select_path(Path(path))

    def _on_facts_timer(self) -> None:
        client = self.engine.client
        self.facts_label.setText(system_figures(client.pid if client.running else None))

    def _open_log_folder(self) -> None:
        problem = open_folder(app_dirs().log)
        if problem:
            self._show_message(problem)

    def _show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, self.info_ms)

    def _show_problem(self, text: str) -> None:
        self._problem = text
        self.statusBar().showMessage(text, self.problem_ms)

    def _clear_problem(self) -> None:
        """A problem said on one page does not follow the user to the next."""
        if self._problem and self.statusBar().currentMessage() == self._problem:
            self.statusBar().clearMessage()
        self._problem = ""

    def _on_unsaved(self, problem: str) -> None:
        """Settings could not be saved: said now, and marked until a save succeeds."""
        self.unsaved_label.setToolTip(problem)
        self.unsaved_label.show()
        self._show_problem(problem)

    # -- drag and drop --------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_paths(event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = _dropped_paths(event.mimeData().urls())
        if paths:
            event.acceptProposedAction()
            self.show_page("library")
            self.library_page.add_paths(paths)

    # -- persistence ----------------------------------------------------------------------

    def _restore_state(self) -> None:
        if self.settings.window_geometry:
            self.restoreGeometry(QByteArray.fromBase64(self.settings.window_geometry.encode()))
        else:  # the first run: a share of the screen's free area (first_size.py)
            free = self.screen().availableGeometry()
            self.setGeometry(*first_geometry((free.x(), free.y(), free.width(), free.height())))
        if self.settings.window_state:
            self.restoreState(QByteArray.fromBase64(self.settings.window_state.encode()))
        self.show_page(self.settings.last_page)
        if self.sidebar.currentRow() < 0:
            self.sidebar.setCurrentRow(0)

    def _close_anyway(self) -> None:
        self._closing_anyway = True
        self.close()

    def save_state(self) -> None:
        self.settings.window_geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        self.settings.window_state = bytes(self.saveState().toBase64().data()).decode()
        self.settings.last_page = self.current_page_key()

    def shutdown(self) -> None:
        """Stop what the window runs, never waiting long (a closing window must not
        freeze): no late answer reaches a page; downloads pause and pushes stop (both
        resume next time: verified files are skipped), a sweep stops, the engine worker
        closes, and the adb server goes if DraftDeck started it."""
        self.phone_page.shutdown()
        self.pair_page.shutdown()  # a measurement's own engine worker
        for page in self.pages.values():
            background.close_owner(page)
        self.downloads.shutdown(timeout=2.0)
        self.engine.shutdown()
        self.tune_sweeps.shutdown(timeout=2.0)
        self.phone_desk.shutdown(timeout=2.0, stop_adb=True)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.recipes_page.has_unsaved() and not self._closing_anyway:
            event.ignore()
            self.show_page("recipes")
            ask(
                self,
                "Unsaved recipe changes",
                "Some recipes have unsaved changes. Quit and discard them?",
                "Discard and Quit",
                self._close_anyway,
            )
            return
        if not self.downloads_page.may_quit(self.close):  # downloads under way: asks first
            event.ignore()
            self.show_page("downloads")
            return
        self.save_state()
        self.shutdown()
        self._facts_timer.stop()
        self._save_settings(self.settings)  # a refusal is logged; closing goes on
        event.accept()
