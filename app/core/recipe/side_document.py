"""A DraftDeck file beside a pack's recipes as an editor opened it: the settings, and the
file's bytes then, so that a save can tell a change made elsewhere since (Chat's switch,
Tune's Apply, the command line) instead of writing over it, as a recipe's save does
(files.py). Each kind of file says where it lies and how it is read and written:
drafting_document.py (`.draftdeck-drafting.json`), desktop_document.py
(`.draftdeck-this-computer.json`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from app.core.infra.errors import FileError, MissingFileError, WriteFailedError
from app.core.infra.jsonfile import JSON_SIZE_LIMIT, read_regular_bytes
from app.core.recipe.files import ChangedOnDiskError
from app.core.recipe.save_lock import saving

S = TypeVar("S")
D = TypeVar("D", bound="SideDocument[Any]")


class SideDocument(ABC, Generic[S]):
    words: ClassVar[str]  # what the file holds, for messages: "drafting settings"

    @staticmethod
    @abstractmethod
    def file_path(pack: Path) -> Path:
        """Where the kind's file lies in `pack`."""

    @staticmethod
    @abstractmethod
    def read(pack: Path) -> S:
        """The settings the pack's file holds (the kind's defaults without a file)."""

    @staticmethod
    @abstractmethod
    def write(pack: Path, settings: S) -> None:
        """Write `settings` atomically (the caller holds the save lock)."""

    def __init__(self, pack: Path, settings: S, disk: bytes | None) -> None:
        self.pack = pack
        self.settings = settings  # as the file holds them
        self._disk = disk  # the file's bytes when read or written; None: there was none

    @classmethod
    def load(cls: type[D], pack: Path) -> D:
        """Raises a FileError naming the file and the problem when it cannot be used."""
        # The bytes before the settings: a change between the two reads is then seen
        # as a change on disk, never missed.
        disk = cls._disk_bytes(cls.file_path(pack))
        return cls(pack, cls.read(pack), disk)

    @classmethod
    def _disk_bytes(cls, path: Path) -> bytes | None:
        """The file's bytes; None when there is no file. Raises FileError."""
        if not path.exists() and not path.is_symlink():
            return None
        return read_regular_bytes(path, cls.words, JSON_SIZE_LIMIT)

    @property
    def path(self) -> Path:
        return self.file_path(self.pack)

    @property
    def on_disk(self) -> bool:
        return self._disk is not None

    def changed_on_disk(self) -> bool:
        try:
            return self._disk_bytes(self.path) != self._disk
        except FileError:
            return True

    def save(self, settings: S, overwrite_changes: bool = False) -> None:
        """Write `settings` atomically, holding the file's save lock from the check for
        changes by others to the write. Raises ChangedOnDiskError (nothing written) when
        the file changed since it was read, and FileError when it cannot be written."""
        with saving(self.path):
            if not overwrite_changes and self.changed_on_disk():
                raise ChangedOnDiskError(
                    self.path, "was changed by another program since it was opened"
                )
            if not self.pack.is_dir():
                # Saving must not conjure up a pack (the write would make the folder).
                raise MissingFileError(self.pack, "folder not found; nothing was saved")
            try:
                self.write(self.pack, settings)
                disk = self._disk_bytes(self.path)
            except OSError as exc:
                raise WriteFailedError(
                    self.path, f"could not save: {exc.strerror or exc}"
                ) from None
        self.settings, self._disk = settings, disk
