"""Tells a page when the chosen pair's recipes change on disk, whoever changed them.

A recipe saved on the Recipes page, this computer's settings (`.draftdeck-this-computer
.json`), the drafting file, or a file a command (`draftdeck tune --apply`, an editor)
wrote: all of them are files in the two pack folders, so one watch on those folders
hears them all, and no page needs to know another (pages never import each other).
The Tune page's form once kept "Draft threads 1 to 1" after a preset saved 2 there,
until Quick was pressed, and Start would have measured the old value.

DraftDeck saves atomically (a temporary file renamed over the old one): the folder
hears that. A file written in place is heard by a watch on the file itself, which a
rename drops, so the files are watched again after every change. A save is several
events (the temporary file, the rename, the .bak copy): they are heard as one,
SETTLE_MS after the last.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app.ui.base.pair_selection import PairSelection

SETTLE_MS = 150


class RecipeWatch(QObject):
    """`changed` once the files in the chosen pair's folders have settled after a change
    (the folders follow the selection)."""

    changed = Signal()

    def __init__(self, selection: PairSelection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._selection = selection
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._touched)
        self._watcher.fileChanged.connect(self._touched)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.changed.emit)
        selection.changed.connect(self._watch_pair)
        self._watch_pair()

    def folders(self) -> list[Path]:
        """The pack folders watched (the chosen pair's that exist)."""
        pair = (self._selection.target, self._selection.draft)
        return [folder for folder in dict.fromkeys(pair) if folder is not None and folder.is_dir()]

    def _watch_pair(self) -> None:
        self._settle.stop()  # a change heard of the pair before is not this pair's
        watched = self._watcher.files() + self._watcher.directories()
        if watched:
            self._watcher.removePaths(watched)
        self._watch_files()

    def _watch_files(self) -> None:
        """The folders and the JSON files now in them (recipes, this computer's settings,
        the drafting file), the ones not watched yet."""
        paths = []
        for folder in self.folders():
            paths.append(str(folder))
            try:
                paths += [str(p) for p in folder.glob("*.json") if p.is_file()]
            except OSError:  # a folder going away: its own event says so
                continue
        known = set(self._watcher.files()) | set(self._watcher.directories())
        new = [p for p in paths if p not in known]
        if new:
            self._watcher.addPaths(new)

    def _touched(self, _path: str) -> None:
        self._watch_files()  # a file renamed over is a new file: watch it again
        self._settle.start()
