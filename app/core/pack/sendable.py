"""A pack is its regular files inside its folder: what Publish and a phone push send.

A pack added by reference is a folder someone else made, and a name in it can lead
anywhere: `LICENSE.txt -> ../../.cache/huggingface/token` uploaded the user's Hub token
as a licence. So only regular files inside the pack are sent. A link to one of the
pack's files is sent as that file (its content, under the link's name). A link out of
the pack (resolved), into its hidden files (DraftDeck's own records, the Hub client's
cache: never part of a pack, bundle.py) or to nothing regular, and any FIFO, device or
socket, refuses the whole send before anything goes, each named with where it leads.

The check is made when the files are listed and again when each is opened: without
following a link (O_NOFOLLOW where the OS has it), and it must be the very file listed
(same device and inode), so a file swapped for a link in between is never read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.core.infra.errors import NotSendableError, UnreadableFileError
from app.core.infra.jsonfile import file_kind, open_regular_file, reading


@dataclass(frozen=True)
class SendableFile:
    rel: str  # posix path inside the pack: the name it is sent under
    path: Path  # the regular file read: the pack's own, or the pack's file a link names
    size: int
    device: int
    inode: int

    def open(self) -> BinaryIO:
        """The file open for reading, if it is still the one listed; the caller closes it."""
        handle = open_regular_file(self.path, follow_links=False)
        status = os.fstat(handle.fileno())
        if (status.st_dev, status.st_ino) != (self.device, self.inode):
            handle.close()
            raise UnreadableFileError(
                self.path,
                "was replaced after the pack's files were listed, so it was not sent; "
                "look at the pack folder, then send the pack again",
            )
        return handle


def sendable_files(folder: Path, names: Iterable[str]) -> tuple[SendableFile, ...]:
    """The pack's files of these names (posix paths inside `folder`), checked; anything
    that is not one of its regular files refuses them all, naming each."""
    root = Path(os.path.realpath(folder))
    found: list[SendableFile] = []
    refused: list[str] = []
    for rel in names:
        file = _sendable(folder, root, rel)
        if isinstance(file, str):
            refused.append(file)
        else:
            found.append(file)
    if refused:
        raise NotSendableError(
            folder,
            f"{'; '.join(refused)}. Only the pack's own regular files are sent, so nothing "
            "was: remove or replace what is named (a link out of the pack by a copy of "
            "the file, if it is meant to go), then send the pack again",
        )
    return tuple(found)


def _sendable(folder: Path, root: Path, rel: str) -> SendableFile | str:
    """The file to send as `rel`, or why it is refused."""
    path = folder / rel
    with reading(path):
        linked = stat.S_ISLNK(os.lstat(path).st_mode)
        target = Path(os.path.realpath(path))
    # A link, or a folder on the way that is one (realpath resolves both).
    leads = f"{rel} is a symbolic link to {target}" if linked else f"{rel} leads to {target}"
    inside = _inside(root, target)
    if inside is None:
        return f"{leads}, outside the pack"
    if any(part.startswith(".") for part in inside):
        return f"{leads}, a hidden file of the pack (DraftDeck's or a cache's)"
    try:
        status = os.stat(target)
    except OSError:
        return f"{leads}, which is missing"
    if not stat.S_ISREG(status.st_mode):
        kind = f"{file_kind(status.st_mode)}, not a regular file"
        itself = target == root.joinpath(*rel.split("/"))
        return f"{rel} is {kind}" if itself else f"{leads}, {kind}"
    return SendableFile(rel, target, status.st_size, status.st_dev, status.st_ino)


def _inside(root: Path, target: Path) -> tuple[str, ...] | None:
    """`target`'s parts below `root`, or None when it is not inside it."""
    try:
        return target.relative_to(root).parts
    except ValueError:  # elsewhere, or on another drive (Windows)
        return None
