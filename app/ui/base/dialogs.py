"""The one place that makes message boxes.

Boxes are opened window-modal with `open()` rather than `exec()`: no nested event
loop (which lets background results arrive in odd orders), and tests can find the box
and press its buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

from app.core.infra.errors import FileError

Button = QMessageBox.StandardButton
# Boxes without a parent window would be garbage-collected while shown; hold them here.
_parentless: set[QMessageBox] = set()


def _box(
    parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str, buttons: Button
) -> QMessageBox:
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if parent is None:
        _parentless.add(box)
        box.finished.connect(lambda _result: _parentless.discard(box))
    return box


def show_error(
    parent: QWidget | None, title: str, message: str, details: str | None = None
) -> QMessageBox:
    box = _box(parent, QMessageBox.Icon.Critical, title, message, Button.Ok)
    box.setObjectName("errorDialog")
    if details:
        box.setDetailedText(details)
    box.open()
    return box


def show_file_error(parent: QWidget | None, title: str, exc: FileError) -> QMessageBox:
    """The problem, then the file it is in (every FileError names one)."""
    return show_error(parent, title, f"{exc.problem}\n\nFile: {exc.path}")


def ask(
    parent: QWidget | None,
    title: str,
    question: str,
    yes_text: str,
    on_yes: Callable[[], None],
) -> QMessageBox:
    """Ask before doing something that cannot be undone; `on_yes` runs only on consent."""
    box = _box(parent, QMessageBox.Icon.Question, title, question, Button.Cancel)
    box.setObjectName("confirmDialog")
    yes = box.addButton(yes_text, QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(Button.Cancel)

    def _on_clicked(button: object) -> None:
        if button is yes:
            on_yes()

    box.buttonClicked.connect(_on_clicked)
    box.open()
    return box


def choose(
    parent: QWidget | None,
    title: str,
    question: str,
    choices: Sequence[tuple[str, Callable[[], None]]],
    on_cancel: Callable[[], None] | None = None,
) -> QMessageBox:
    """Ask which of a few ways to go on, each a button with its action; Cancel (also Esc
    and closing the box) runs only `on_cancel` and is the default, so Enter never picks
    a way by accident."""
    box = _box(parent, QMessageBox.Icon.Question, title, question, Button.Cancel)
    box.setObjectName("choiceDialog")
    actions: dict[QAbstractButton, Callable[[], None]] = {
        box.addButton(words, QMessageBox.ButtonRole.AcceptRole): action for words, action in choices
    }
    box.setDefaultButton(Button.Cancel)

    chosen: list[Callable[[], None]] = []

    def _on_clicked(button: QAbstractButton) -> None:
        action = actions.get(button)
        if action is not None:
            chosen.append(action)
            action()

    def _on_finished(_result: int) -> None:
        # Closing the box by its title bar clicks no button: it is a Cancel too.
        if not chosen and on_cancel is not None:
            on_cancel()

    box.buttonClicked.connect(_on_clicked)
    box.finished.connect(_on_finished)
    box.open()
    return box
