"""Start the GUI: logging, the crash guard, settings, the main window."""

from __future__ import annotations

import logging
import os
import sys

from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication

from app import __version__
from app.core.infra.logsetup import setup_logging
from app.core.infra.resources import resource
from app.core.infra.settings import load_settings
from app.core.pack.library import Library
from app.core.packmaking.export_partials import remove_abandoned
from app.ui.base.background import wait_for_background
from app.ui.base.gui_thread_gc import collect_in_gui_thread
from app.ui.base.scheme import scheme
from app.ui.base.settings_saver import SettingsSaver
from app.ui.shell.crash_guard import CrashGuard, route_qt_messages
from app.ui.shell.main_window import MainWindow
from app.ui.shell.platform_check import xcb_problem

log = logging.getLogger("draftdeck.app")


def app_icon() -> QIcon:
    pixmap = QPixmap()
    pixmap.loadFromData(resource("icons", "draftdeck.svg").read_bytes())
    return QIcon(pixmap)


def create_main_window() -> MainWindow:
    """The window with its settings and library, as `run_gui` and the tests build it."""
    app = QApplication.instance()
    assert app is not None, "create the QApplication first"
    collect_in_gui_thread(app)
    settings = load_settings()
    saver = SettingsSaver()
    library = Library(settings, saver)
    library.cleanup_staging()
    remove_abandoned()  # what a killed export left beside its output folder
    return MainWindow(settings, library, saver, app_icon())


def run_gui() -> int:
    log_path = setup_logging()
    problem = xcb_problem(os.environ, sys.platform)
    if problem:  # Qt would abort on creating the application, saying only "Aborted"
        log.error("%s", problem)
        print(problem, file=sys.stderr)
        return 1
    route_qt_messages()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("DraftDeck")
    app.setApplicationVersion(__version__)
    scheme().follow_system()  # the palette and style sheet, light or dark, kept in step
    guard = CrashGuard()
    guard.install()
    log.info("DraftDeck %s starting; log file %s", __version__, log_path)
    window = create_main_window()
    window.show()
    code = app.exec()
    wait_for_background()  # a sweep or catalog refresh still finishing after close
    guard.uninstall()
    return int(code)
