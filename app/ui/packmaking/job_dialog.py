"""What the two pack-making dialogs share: a start button that is the default (Return
starts), a bar (busy, or filling once the job counts) and a status line, Esc, Cancel or
the title bar's close stopping the running job before they close the dialog."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QWidget,
)

from app.core.infra.errors import FileError
from app.ui.base.labels import wrap_to_width

# Qt's bar counts in int: the bytes of a pack over 2 GiB would overflow it.
BAR_STEPS = 1000


def problem_words(error: Exception) -> str:
    """An error for the user: a file's problem, then the file it is in."""
    if isinstance(error, FileError):
        return f"{error.problem}\nFile: {error.path}"
    return str(error)


def folder_row(edit: QLineEdit, title: str) -> QHBoxLayout:
    """`edit` with a Browse… button that chooses a folder into it."""
    browse = QPushButton("Browse…")
    browse.setAutoDefault(False)  # Return starts the dialog's job, not a file dialog

    def choose() -> None:
        folder = QFileDialog.getExistingDirectory(edit.window(), title, edit.text())
        if folder:
            edit.setText(folder)

    browse.clicked.connect(choose)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


def say_in(label: QLabel, text: str, problem: bool, rich: bool = False) -> None:
    """Show `text` in `label`, as a warning when it is a problem. Plain text unless
    `rich`: paths, the exporter's lines and errors may hold "<"."""
    label.setObjectName("warning" if problem else "")
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setText(text)
    label.style().polish(label)


class JobDialog(QDialog):
    def __init__(self, start_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy until the job counts (show_progress)
        self.bar.hide()
        self.status = wrap_to_width(QLabel())
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.status.setOpenExternalLinks(True)
        self.buttons = QDialogButtonBox()
        self.start_button = self.buttons.addButton(
            start_text, QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.start_button.setDefault(True)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.start_button.clicked.connect(self.start)
        self.close_button.clicked.connect(self.reject)
        app = QCoreApplication.instance()
        if app is not None:  # the app quitting under a job stops it
            app.aboutToQuit.connect(self.shutdown)

    # Each dialog defines its job's running/start/cancel (Make Pack, Publish); the base
    # only wires them to the buttons, Esc and closing.
    def running(self) -> bool:
        raise NotImplementedError

    def start(self) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        """Stop what still runs unheard; called as the dialog closes."""

    def say(self, text: str, problem: bool = False, rich: bool = False) -> None:
        say_in(self.status, text, problem, rich)

    def show_running(self, running: bool) -> None:
        if running and self.bar.isHidden():  # a new run: busy until it counts
            self.bar.setRange(0, 0)
        self.bar.setVisible(running)
        self.close_button.setText("Cancel" if running else "Close")

    def show_progress(self, done: int, total: int) -> None:
        """Fill the bar to `done` of `total`."""
        self.bar.setRange(0, BAR_STEPS)
        self.bar.setValue(min(BAR_STEPS, BAR_STEPS * done // total) if total > 0 else 0)

    def reject(self) -> None:
        if self.running():
            self.cancel()
            return
        self.shutdown()
        super().reject()
