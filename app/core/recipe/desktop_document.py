"""A pack's settings for this computer as an editor opened them (desktop_settings.py says
what they are): the settings, and the file's bytes then, so that a save can tell a change
made elsewhere since (Tune's Apply, `draftdeck recipe move-to-computer`) instead of
writing over it, as a recipe's save does (files.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import FileError, MissingFileError, WriteFailedError
from app.core.infra.jsonfile import JSON_SIZE_LIMIT, read_regular_bytes
from app.core.recipe.desktop_settings import (
    DesktopSettings,
    read_desktop,
    settings_path,
    write_desktop,
)
from app.core.recipe.files import ChangedOnDiskError
from app.core.recipe.save_lock import saving


def _disk_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when there is no file. Raises FileError."""
    if not path.exists() and not path.is_symlink():
        return None
    return read_regular_bytes(path, "this computer's settings", JSON_SIZE_LIMIT)


@dataclass
class DesktopDocument:
    pack: Path
    settings: DesktopSettings  # as the file holds them (none without a file)
    _disk: bytes | None  # the file's bytes when read or written; None: there was none

    @classmethod
    def load(cls, pack: Path) -> DesktopDocument:
        """Raises a FileError naming the file and the problem when it cannot be used."""
        # The bytes before the settings: a change between the two reads is then seen
        # as a change on disk, never missed.
        disk = _disk_bytes(settings_path(pack))
        return cls(pack, read_desktop(pack), disk)

    @property
    def path(self) -> Path:
        return settings_path(self.pack)

    @property
    def on_disk(self) -> bool:
        return self._disk is not None

    def changed_on_disk(self) -> bool:
        try:
            return _disk_bytes(self.path) != self._disk
        except FileError:
            return True

    def save(self, settings: DesktopSettings, overwrite_changes: bool = False) -> None:
        """Write `settings` atomically (none left: no file), holding the file's save lock
        from the check for changes by others to the write. Raises ChangedOnDiskError
        (nothing written) when the file changed since it was read, and FileError when it
        cannot be written."""
        with saving(self.path):
            if not overwrite_changes and self.changed_on_disk():
                raise ChangedOnDiskError(
                    self.path, "was changed by another program since it was opened"
                )
            if not self.pack.is_dir():
                raise MissingFileError(self.pack, "folder not found; nothing was saved")
            try:
                write_desktop(self.pack, settings)
                disk = _disk_bytes(self.path)
            except OSError as exc:
                raise WriteFailedError(
                    self.path, f"could not save: {exc.strerror or exc}"
                ) from None
        self.settings, self._disk = settings, disk
