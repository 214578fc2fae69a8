"""Keys to switch pages, and the Help menu's list of every key the window answers.

The list is read from the window's own actions and shortcuts when it opens, so a key a
page adds is listed without anyone remembering to; only keys that a widget handles in
its key events (they have no action) are written down here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

ANYWHERE = "Anywhere"
# Keys handled in key events rather than by an action (the chat box, the Chat page).
HANDLED_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Enter or Ctrl+Enter", "Send a chat message (choose which on the Chat page)", "Chat"),
    ("Esc", "Stop generating", "Chat"),
)


# Keys of their own on some keyboards that Qt's standard bindings add (Save: Ctrl+S and
# a "Save" key): listing them would read as a key the user cannot find.
_DEDICATED_KEYS = {
    QKeySequence(key)
    for key in (
        Qt.Key.Key_Save,
        Qt.Key.Key_Open,
        Qt.Key.Key_Close,
        Qt.Key.Key_Refresh,
        Qt.Key.Key_Reload,
        Qt.Key.Key_Find,
        Qt.Key.Key_Undo,
        Qt.Key.Key_Redo,
        Qt.Key.Key_Copy,
        Qt.Key.Key_Cut,
        Qt.Key.Key_Paste,
        Qt.Key.Key_Help,
        Qt.Key.Key_Back,
        Qt.Key.Key_Forward,
    )
}


@dataclass(frozen=True)
class ShortcutRow:
    keys: str
    action: str
    where: str


def page_actions(
    parent: QWidget, titles: Mapping[str, str], show_page: Callable[[str], None]
) -> list[QAction]:
    """Ctrl+1 … Ctrl+<n>: one action per page, in the sidebar's order (up to 9)."""
    actions = []
    for number, (key, title) in enumerate(list(titles.items())[:9], start=1):
        action = QAction(title, parent)
        action.setShortcut(QKeySequence(f"Ctrl+{number}"))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setStatusTip(f"Show the {title} page")
        action.triggered.connect(lambda _checked=False, k=key: show_page(k))
        actions.append(action)
    return actions


def _keys_text(sequences: list[QKeySequence]) -> str:
    """The keys as the platform writes them, leaving out the dedicated keys few keyboards
    have (Qt binds Save to Ctrl+S and to a "Save" key)."""
    typed = [s for s in sequences if s not in _DEDICATED_KEYS]
    texts = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in typed]
    return " or ".join(t for t in texts if t)


def _page_of(item: QObject, pages: Mapping[QWidget, str]) -> str | None:
    node: QObject | None = item
    while node is not None:
        if isinstance(node, QWidget) and node in pages:
            return pages[node]
        node = node.parent()
    return None


def _action_row(action: QAction, pages: Mapping[QWidget, str]) -> ShortcutRow | None:
    keys = _keys_text(action.shortcuts())
    if not keys:
        return None
    # A window-wide key that sits in a menu works on every page; any other works where
    # its page is shown (or, for page-context keys, has the focus).
    in_menu = any(isinstance(o, QMenu) for o in action.associatedObjects())
    page_wide = action.shortcutContext() in (
        Qt.ShortcutContext.WidgetShortcut,
        Qt.ShortcutContext.WidgetWithChildrenShortcut,
    )
    page = _page_of(action, pages)
    where = page if page and (page_wide or not in_menu) else ANYWHERE
    what = action.statusTip() or action.text()  # a tooltip may hold the keys already
    return ShortcutRow(keys, what.replace("&", "").rstrip("…."), where)


def _shortcut_row(shortcut: QShortcut, pages: Mapping[QWidget, str]) -> ShortcutRow | None:
    keys = _keys_text(shortcut.keys())
    if not keys or not shortcut.isEnabled():
        return None
    what = shortcut.whatsThis() or shortcut.objectName() or "(not described)"
    return ShortcutRow(keys, what, _page_of(shortcut, pages) or ANYWHERE)


def collect_shortcuts(window: QMainWindow, pages: Mapping[str, QWidget]) -> list[ShortcutRow]:
    """Every key the window answers: its actions' and shortcuts', then the handled keys;
    keys that work anywhere first, then page by page in `pages`' order (by title)."""
    titles = {page: title for title, page in pages.items()}
    rows: list[ShortcutRow] = []
    for action in window.findChildren(QAction):
        row = _action_row(action, titles)
        if row is not None and row not in rows:  # one action in a menu and a toolbar
            rows.append(row)
    for shortcut in window.findChildren(QShortcut):
        row = _shortcut_row(shortcut, titles)
        if row is not None and row not in rows:
            rows.append(row)
    rows += [ShortcutRow(*handled) for handled in HANDLED_KEYS if handled[2] in pages]
    order = [ANYWHERE, *pages]
    return sorted(rows, key=lambda r: order.index(r.where) if r.where in order else len(order))


class ShortcutsDialog(QDialog):
    """Help > Keyboard Shortcuts: a table of keys, what they do and where. `pages`: each
    page by its title, in the sidebar's order."""

    def __init__(self, window: QMainWindow, pages: Mapping[str, QWidget]) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard Shortcuts")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.rows = collect_shortcuts(window, pages)
        self.table = QTableWidget(len(self.rows), 3)
        self.table.setHorizontalHeaderLabels(["Keys", "Action", "Where"])
        for r, row in enumerate(self.rows):
            for c, text in enumerate((row.keys, row.action, row.where)):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # nothing here to act on
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(640, 600)  # fits inside the smallest window, 1024x700
