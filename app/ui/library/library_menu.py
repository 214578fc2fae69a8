"""The Library's right-click menu on a pack: pair it, measure a draft, open or copy where
it is, remove it.

The page's own actions (Open Location, Remove) are reused, so the menu, the toolbar and
the keys do one thing each; pairing and measuring are asked of the window, which owns
the Pair page and the pack-making dialogs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from app.core.pack.library import PackEntry
from app.core.pack.pairing import DRAFT_ROLES, TARGET_ROLES, role_of

TARGET, DRAFT = "target", "draft"


def pack_menu(
    parent: QWidget,
    entry: PackEntry,
    page_actions: list[QAction],
    use_in_pair: Callable[[str, Path], None],
    said: Callable[[str], None],
    measure: Callable[[Path], None],
) -> QMenu:
    """The menu for `entry`: Use as Target / Use as Draft (for the roles it can play and
    only when it reads), Measure Pack… (a draft), Copy Path, then the page's
    `page_actions`."""
    menu = QMenu(parent)
    menu.setObjectName("packMenu")
    for text, role, roles in (
        ("Use as &Target", TARGET, TARGET_ROLES),
        ("Use as &Draft", DRAFT, DRAFT_ROLES),
    ):
        action = menu.addAction(text)
        action.setEnabled(entry.ok and role_of(entry) in roles)
        action.triggered.connect(lambda _checked=False, r=role: use_in_pair(r, entry.path))
    menu.addSeparator()
    measure_action = menu.addAction("Mea&sure Pack…")
    measure_action.setEnabled(entry.ok and role_of(entry) in DRAFT_ROLES)
    measure_action.setStatusTip("Measure this draft against targets and write its runtime_config")
    measure_action.triggered.connect(lambda: measure(entry.path))
    menu.addSeparator()
    copy = menu.addAction("&Copy Path")

    def copy_path() -> None:
        QGuiApplication.clipboard().setText(str(entry.path))
        said(f"Copied {entry.path}")

    copy.triggered.connect(copy_path)
    menu.addActions(page_actions)
    return menu
