"""One exception hook for the whole app: log, then show a dialog, never die.

Errors raised in other threads are handed to the GUI thread through a queued signal.
Qt's own warnings are routed into the `draftdeck.qt` logger.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType

from PySide6.QtCore import QMessageLogContext, QObject, QtMsgType, Signal, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from app.ui.base.dialogs import show_error

log = logging.getLogger("draftdeck.crash")
qt_log = logging.getLogger("draftdeck.qt")

_QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


class CrashGuard(QObject):
    """Installs sys.excepthook and threading.excepthook; shows errors in dialogs."""

    error_reported = Signal(str, str)

    def __init__(self) -> None:
        super().__init__()
        self.error_reported.connect(self._on_error_reported)
        self._previous = sys.excepthook
        self._previous_thread = threading.excepthook

    def install(self) -> None:
        sys.excepthook = self._hook
        threading.excepthook = self._thread_hook

    def uninstall(self) -> None:
        sys.excepthook = self._previous
        threading.excepthook = self._previous_thread

    def _hook(
        self,
        kind: type[BaseException],
        value: BaseException,
        tb: TracebackType | None,
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        details = "".join(traceback.format_exception(kind, value, tb))
        log.error("unexpected error:\n%s", details)
        # Emitting is thread-safe; the slot runs in the GUI thread.
        self.error_reported.emit(f"{kind.__name__}: {value}", details)

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            self._hook(args.exc_type, args.exc_value, args.exc_traceback)

    def _on_error_reported(self, summary: str, details: str) -> None:
        parent = QApplication.activeWindow()
        show_error(
            parent,
            "Something went wrong",
            "DraftDeck hit an unexpected error and carried on. "
            "Your data is unchanged; the details are also in the log file.\n\n" + summary,
            details,
        )


def route_qt_messages() -> None:
    def handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        qt_log.log(_QT_LEVELS.get(kind, logging.WARNING), "%s", message)

    qInstallMessageHandler(handler)
