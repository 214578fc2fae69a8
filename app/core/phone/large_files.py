"""Large files of a pack: room checked before each one, sent so that a cut keeps what
arrived, and resumed from there.

A file of LARGE_FILE bytes or more is written on the phone by `cat` under a name of its
own that stays the same from one push to the next (`.NAME.resume.draftdeck-partial`),
appending what stdin brings (stream_send). After a pulled cable or a killed DraftDeck
that copy holds a prefix of the file. The next push hashes the copy on the phone
(`sha256sum`, which every toybox since Android 8 has) and the same number of bytes of
the local file: when they match only the rest is sent, appended with `cat >>`; when not
(a bad cable, another version of the pack) the file is sent whole. The whole file's
sha256 is checked on the phone afterwards as for every other file, so a copy that went
wrong in any way is never installed.

Before each large file `df` is asked again: space taken by another app since the check
of the whole pack is found before the file is sent, not after gigabytes of it.

Phones without the shell protocol (Android 6) cannot feed a command's stdin: their
large files go by sync SEND, whole, as the small ones do.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.core.infra.errors import PhoneError
from app.core.infra.units import format_bytes
from app.core.pack.sendable import SendableFile
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Phone
from app.core.phone.pack_marker import TEMP_SUFFIX
from app.core.phone.stream_send import Digest, stream_file
from app.core.phone.sync_send import PushCancelled, read_block, send_file

log = logging.getLogger("draftdeck.phone")

# Below this a cut costs little to send again, and one `df` per file would cost more.
LARGE_FILE = 8 * 1024 * 1024
RESUMABLE = ".resume"


class Sha256(Digest, Protocol):
    def copy(self) -> Sha256: ...


@dataclass(frozen=True)
class Resume:
    """The start of a file that is on the phone already, intact."""

    offset: int
    prefix: Sha256  # over those bytes (copied before use: sending goes on hashing)


def temp_copy(final: str) -> str:
    """A name of its own for one sync SEND: the phone's clean-up of an earlier, cut copy
    (which it does on its own time) can never hit this one."""
    folder, name = posixpath.split(final)
    return posixpath.join(folder, f".{name}.{uuid.uuid4().hex[:8]}{TEMP_SUFFIX}")


def resumable_copy(final: str) -> str:
    """The copy a large file is written to, the same from one push to the next."""
    folder, name = posixpath.split(final)
    return posixpath.join(folder, f".{name}{RESUMABLE}{TEMP_SUFFIX}")


def find_resumes(
    phone: Phone, folder: str, files: Sequence[SendableFile], cancelled: Callable[[], bool]
) -> dict[str, Resume]:
    """For each large file with a copy cut short in `folder` whose bytes match the local
    file's first bytes, how far that copy goes (two shell commands for all)."""
    if not phone.has_shell_v2:
        return {}
    copies = {resumable_copy(posixpath.join(folder, f.rel)): f for f in files}
    copies = {path: f for path, f in copies.items() if f.size >= LARGE_FILE}
    if not copies:
        return {}
    sizes = fs.file_sizes(phone, list(copies))
    # A copy longer than the file cannot be its start; an empty one saves nothing.
    sizes = {p: n for p, n in sizes.items() if p in copies and 0 < n <= copies[p].size}
    theirs = fs.sha256_of(phone, list(sizes)) if sizes else {}
    found: dict[str, Resume] = {}
    for path, size in sizes.items():
        item = copies[path]
        prefix = prefix_sha256(item, size, cancelled)
        if prefix.hexdigest() == theirs.get(path):
            found[item.rel] = Resume(size, prefix)
        else:
            log.info(
                "%s on %s: the copy cut short (%s) is not the start of %s; sending it whole",
                path,
                phone.name,
                format_bytes(size),
                item.path,
            )
    return found


def prefix_sha256(item: SendableFile, length: int, cancelled: Callable[[], bool]) -> Sha256:
    """sha256 over the first `length` bytes of a pack's file."""
    digest = hashlib.sha256()
    left = length
    with item.open() as handle:
        while left and (block := read_block(handle, item.path, min(left, 1 << 20))):
            if cancelled():
                raise PushCancelled(str(item.path))
            digest.update(block)
            left -= len(block)
    return digest


def check_room(
    phone: Phone, folder: str, rel: str, rest: int, margin: Callable[[int], int]
) -> None:
    """Refuse a file the phone has no room for, before any of it is sent."""
    if not rest:
        return
    free = fs.free_bytes(phone, folder)
    spare = margin(rest)
    if free < rest + spare:
        raise PhoneError(
            f"Not enough space on {phone.name} in {folder} for {rel}: it needs "
            f"{format_bytes(rest)} (plus {format_bytes(spare)} to spare) and "
            f"{format_bytes(free)} is free. Nothing of it was sent; free some space and "
            "push again (the files already copied stay).",
            "no_space",
        )


def send_large(
    phone: Phone,
    item: SendableFile,
    final: str,
    resume: Resume | None,
    margin: Callable[[int], int],
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> tuple[str, str]:
    """Send a large file (its rest, after `resume`) to a copy next to `final`: that
    copy's path and the whole file's sha256."""
    start = resume.offset if resume else 0
    check_room(phone, posixpath.dirname(final), item.rel, item.size - start, margin)
    if not phone.has_shell_v2:
        remote = temp_copy(final)
        return remote, send_file(phone, item, remote, on_bytes, cancelled)
    remote = resumable_copy(final)
    digest = resume.prefix.copy() if resume else hashlib.sha256()
    return remote, stream_file(phone, item, remote, start, digest, on_bytes, cancelled)
