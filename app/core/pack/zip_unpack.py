"""Unpacking a zipped pack safely: which members may be unpacked (nothing that escapes
the pack folder, nothing this Python cannot unpack, no zip bomb), whether the disk has
room, and the unpacking itself with progress and cancel (Library.import_zip)."""

from __future__ import annotations

import shutil
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from app.core.infra.errors import (
    DraftDeckError,
    NotABundleError,
    UnreadableFileError,
    UnsafeArchiveError,
    WriteFailedError,
)
from app.core.infra.units import format_bytes

# Packs are weights that barely compress; beyond this ratio a zip is a bomb. Archives
# that unpack to less than the floor are never refused for their ratio.
MAX_RATIO = 100
RATIO_FLOOR = 64 << 20
FREE_SPACE_MARGIN = 256 << 20  # left free after an import, for settings and logs
_CHUNK = 1 << 20
_ENCRYPTED = 0x1  # general purpose flag bit 0
_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_OTHER_METHODS = {
    1: "Shrink",
    6: "Implode",
    9: "Deflate64",
    93: "Zstandard",
    95: "xz",
    98: "PPMd",
    99: "AES-encrypted",
}

ImportProgress = Callable[[int, int], None]  # bytes unpacked so far, bytes in all


class ImportCancelled(DraftDeckError):
    """The user stopped a zip import; nothing was installed."""


@dataclass(frozen=True)
class ZipPlan:
    files: list[zipfile.ZipInfo]
    top: str | None  # the one folder every file sits in, stripped when unpacking
    total: int  # unpacked bytes, as the archive declares them


def checked_members(archive: Path) -> ZipPlan:
    """The archive's file entries, refusing any that could escape the pack folder or
    that this Python cannot unpack."""
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
    except FileNotFoundError:
        raise NotABundleError(archive, "file not found") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise UnreadableFileError(archive, f"not a readable zip file ({exc})") from None
    files: list[zipfile.ZipInfo] = []
    for info in infos:
        name = info.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in parts:
            raise UnsafeArchiveError(
                archive, f"entry {info.filename!r} would land outside the pack"
            )
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            raise UnsafeArchiveError(archive, f"entry {info.filename!r} is a symbolic link")
        if not info.is_dir():
            _check_unpackable(archive, info)
            files.append(info)
    if not files:
        raise NotABundleError(archive, "the zip is empty")
    tops = {PurePosixPath(i.filename.replace("\\", "/")).parts[0] for i in files}
    nested = all(len(PurePosixPath(i.filename.replace("\\", "/")).parts) > 1 for i in files)
    top = tops.pop() if nested and len(tops) == 1 else None
    return ZipPlan(files, top, sum(i.file_size for i in files))


def _check_unpackable(archive: Path, info: zipfile.ZipInfo) -> None:
    if info.flag_bits & _ENCRYPTED:
        raise UnreadableFileError(
            archive,
            f"the zip is password-protected (entry {info.filename!r} is encrypted); "
            "unpack it with a zip tool and add the folder instead",
        )
    if info.compress_type not in _METHODS:
        method = _OTHER_METHODS.get(info.compress_type, f"method {info.compress_type}")
        raise UnreadableFileError(
            archive,
            f"entry {info.filename!r} uses {method} compression, which DraftDeck cannot "
            "unpack; re-zip it with standard (Deflate) compression or unpack it and add "
            "the folder instead",
        )


def pack_name(archive: Path, name: str) -> str:
    """The folder name for a zipped pack: a leading "." would hide the pack from the
    library scan (and ".staging-" names are removed at start-up), so it is dropped."""
    visible = name.lstrip(". ")
    if not visible:
        raise UnsafeArchiveError(archive, f"{name!r} cannot be a pack name")
    return visible


def check_unpacked_size(archive: Path, total: int, root: Path) -> None:
    """Refuse zip bombs and archives that would fill the disk, before unpacking."""
    packed = max(archive.stat().st_size, 1)
    if total > RATIO_FLOOR and total > MAX_RATIO * packed:
        raise UnsafeArchiveError(
            archive,
            f"a {format_bytes(packed)} zip that would unpack to {format_bytes(total)} "
            f"(over {MAX_RATIO}:1) is not a pack; refused",
        )
    free = shutil.disk_usage(root).free
    if total + FREE_SPACE_MARGIN > free:
        raise WriteFailedError(
            root,
            f"not enough free space to unpack {archive.name}: it needs "
            f"{format_bytes(total)} (plus {format_bytes(FREE_SPACE_MARGIN)} to spare), "
            f"{format_bytes(free)} is free",
        )


def extract(
    archive: Path,
    plan: ZipPlan,
    dest: Path,
    progress: ImportProgress | None,
    cancel: threading.Event | None,
) -> None:
    done = 0
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in plan.files:
                parts = PurePosixPath(info.filename.replace("\\", "/")).parts
                target = dest / (Path(*parts[1:]) if plan.top else Path(*parts))
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, target.open("wb") as out:
                    while chunk := src.read(_CHUNK):
                        # Counted, not trusted: a crafted archive can understate sizes.
                        done += len(chunk)
                        if done > plan.total:
                            raise UnsafeArchiveError(
                                archive, "unpacks to more than the sizes it declares; refused"
                            )
                        if cancel is not None and cancel.is_set():
                            raise ImportCancelled(f"import of {archive.name} cancelled")
                        out.write(chunk)
                        if progress is not None:
                            progress(done, plan.total)
    except OSError as exc:
        raise WriteFailedError(
            dest, f"could not unpack {archive.name}: {exc.strerror or exc}"
        ) from None
    except (zipfile.BadZipFile, EOFError) as exc:
        raise UnreadableFileError(archive, f"damaged zip file ({exc})") from None
    except (NotImplementedError, RuntimeError) as exc:  # methods _check_unpackable missed
        raise UnreadableFileError(archive, f"cannot unpack this zip: {exc}") from None
