"""The packs installed on this computer.

Packs live as folders in the library folder, or anywhere else when the user adds a
folder by reference (it is read in place and never moved or deleted by us). Zip files
are unpacked into a hidden staging folder first and renamed into place in one step, so
a half-unpacked pack never shows up.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from app.core.infra.deletion import remove_tree
from app.core.infra.errors import (
    AlreadyExistsError,
    DraftDeckError,
    FileError,
    NotABundleError,
    UnreadableFileError,
    UnsafeArchiveError,
    WriteFailedError,
)
from app.core.infra.settings import Settings
from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo, looks_like_bundle, read_bundle
from app.core.pack.export_check import ExportVerdict, SavedExportCheck, read_export_check
from app.core.pack.files import CONFIG, LLM_MODEL
from app.core.pack.folder_checks import require_folder
from app.core.pack.folder_stamp import PackStamp, folder_stamp

log = logging.getLogger("draftdeck.library")

STAGING_PREFIX = ".staging-"
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
class PackEntry:
    path: Path
    by_reference: bool
    info: BundleInfo | None
    error: FileError | None
    # The folder's files as they were just before it was read (folder_stamp.py): equal
    # stamps, equal readings.
    stamp: PackStamp = field(default=("", -1, ()), compare=False)
    # Its recorded export check (export_check.json); None: never checked.
    export_check: SavedExportCheck | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def ok(self) -> bool:
        return self.info is not None

    @property
    def export_doubtful(self) -> bool:
        """A readable pack whose export check failed or cannot be read."""
        check = self.export_check
        return self.ok and check is not None and check.verdict != ExportVerdict.VERIFIED

    @property
    def status(self) -> str:
        """The problem naming the file it is in (a pack has many files), or "ok"."""
        if self.error is None:
            return "ok"
        problem, where = self.error.problem, self.error.path
        if where == self.path or where.name in problem:
            return problem
        name = where.relative_to(self.path) if where.is_relative_to(self.path) else where
        return f"{name}: {problem}"


def read_entry(path: Path, by_reference: bool, stamp: PackStamp | None = None) -> PackEntry:
    """The pack read now; `stamp` when the caller just took it (taken before reading, so
    a file that changes while the pack is read changes the next stamp)."""
    stamp = stamp or folder_stamp(path)
    try:
        info = read_bundle(path)
    except FileError as exc:
        return PackEntry(path, by_reference, None, exc, stamp)
    return PackEntry(path, by_reference, info, None, stamp, read_export_check(path))


class Library:
    """Installed packs, backed by the library folder and the settings' references."""

    def __init__(self, settings: Settings, save: Callable[[Settings], None]) -> None:
        self.settings = settings
        self._save = save
        # The last reading of each pack folder, by (folder, is a reference): `scan`
        # re-reads only folders whose stamp changed. Scans run on worker threads.
        self._readings: dict[tuple[Path, bool], PackEntry] = {}
        self._readings_lock = threading.Lock()

    @property
    def root(self) -> Path:
        return self.settings.library_path()

    def save_settings(self) -> None:
        """Save a change another service made to the shared settings, the library's way
        (the window reports a refusal; a command raises it)."""
        self._save(self.settings)

    def set_root(self, folder: Path) -> None:
        folder = Path(folder).resolve()
        _require_utf8_path(folder)
        self.settings.library_dir = str(folder)
        self._save(self.settings)

    def pack_folders(self) -> list[tuple[Path, bool]]:
        """Every pack folder (and whether it is a reference), without reading the packs:
        for callers that only need paths."""
        found: list[tuple[Path, bool]] = []
        if self.root.is_dir():
            for child in sorted(self.root.iterdir()):
                if child.is_dir() and not child.name.startswith("."):
                    found.append((child, False))
        found += [(Path(ref), True) for ref in list(self.settings.references)]
        return found

    def pack_named(self, text: str) -> Path | None:
        """A pack folder, or the name of a readable pack in the library, as its folder
        (None: neither). Reads the library when `text` is no folder."""
        path = Path(text)
        if path.is_dir():
            return path.resolve()
        packs = {e.name: e.path for e in self.scan() if e.ok}
        return packs.get(text)

    def scan(self) -> list[PackEntry]:
        """Every pack, read again only where its files changed since the last scan (a
        library of 300 packs costs a stat per file, not 300 bundle reads). Safe to call
        from any thread."""
        with self._readings_lock:
            known = dict(self._readings)
        entries: list[PackEntry] = []
        for path, ref in self.pack_folders():
            entry, stamp = known.get((path, ref)), folder_stamp(path)
            if entry is None or entry.stamp != stamp:
                entry = read_entry(path, ref, stamp)
            entries.append(entry)
        with self._readings_lock:
            self._readings = {(e.path, e.by_reference): e for e in entries}
        return sorted(entries, key=lambda e: (e.name.lower(), str(e.path)))

    def add_folder(self, folder: Path) -> list[PackEntry]:
        """Add a pack folder by reference, or every pack folder directly inside it."""
        folder = Path(folder).resolve()
        _require_utf8_path(folder)
        require_folder(folder)
        candidates = (
            [folder]
            if looks_like_bundle(folder)
            else [
                child
                for child in sorted(folder.iterdir())
                if child.is_dir() and looks_like_bundle(child)
            ]
        )
        if not candidates:
            raise NotABundleError(folder, f"no MNN bundle here (no {CONFIG} or {LLM_MODEL})")
        for candidate in candidates:  # all checked before any is added
            _require_utf8_path(candidate)
        known = {os.path.normcase(str(p)) for p in self._known_paths()}
        added: list[PackEntry] = []
        for candidate in candidates:
            if os.path.normcase(str(candidate)) in known:
                continue
            self.settings.references.append(str(candidate))
            added.append(read_entry(candidate, by_reference=True))
        if not added:
            raise AlreadyExistsError(folder, "already in the library")
        self._save(self.settings)
        return added

    def remove(self, entry: PackEntry) -> None:
        """Forget a referenced pack; delete a pack that lives in the library folder."""
        if entry.by_reference:
            self.settings.references = [
                r for r in self.settings.references if Path(r) != entry.path
            ]
            self._save(self.settings)
            return
        if entry.path.parent.resolve() != self.root.resolve():
            raise UnreadableFileError(entry.path, "is not inside the library folder; not deleted")
        # Rename first so a failure half-way through never leaves a half pack visible.
        doomed = entry.path.with_name(f".deleting-{entry.path.name}")
        try:
            if doomed.exists():  # left by a delete that could not finish: in the way
                remove_tree(doomed)
            # Windows refuses while a file of the pack is open (say, loaded in a chat).
            entry.path.rename(doomed)
            remove_tree(doomed)
        except OSError as exc:
            raise WriteFailedError(entry.path, f"could not delete: {exc.strerror or exc}") from None

    def import_zip(
        self,
        archive: Path,
        progress: ImportProgress | None = None,
        cancel: threading.Event | None = None,
    ) -> PackEntry:
        """Unpack a zipped pack into the library folder.

        `progress(done, total)` hears of every unpacked chunk (on this thread); setting
        `cancel` stops the import, removing what was unpacked, with ImportCancelled."""
        archive = Path(archive)
        plan = _checked_members(archive)
        name = _pack_name(archive, plan.top or archive.stem)
        dest = self.root / name
        if dest.exists():
            raise AlreadyExistsError(dest, f"a pack named {name!r} is already in the library")
        self.root.mkdir(parents=True, exist_ok=True)
        _check_unpacked_size(archive, plan.total, self.root)
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.root))
        try:
            _extract(archive, plan, staging, progress, cancel)
            if not looks_like_bundle(staging):
                raise NotABundleError(
                    archive, f"the zip holds no MNN bundle (no {CONFIG} or {LLM_MODEL})"
                )
            try:
                staging.rename(dest)
            except OSError as exc:  # e.g. Windows, while a scanner holds a new file open
                raise WriteFailedError(
                    dest, f"could not move the unpacked pack into place: {exc.strerror or exc}"
                ) from None
        except BaseException:
            remove_tree(staging, ignore_errors=True)
            raise
        log.info("imported %s into %s", archive, dest)
        return read_entry(dest, by_reference=False)

    def cleanup_staging(self) -> None:
        """Remove leftovers of an import or delete that was interrupted by a crash."""
        if not self.root.is_dir():
            return
        for child in self.root.iterdir():
            if child.name.startswith((STAGING_PREFIX, ".deleting-")):
                remove_tree(child, ignore_errors=True)

    def _known_paths(self) -> list[Path]:
        return [path.resolve() for path, _ref in self.pack_folders()]


def _require_utf8_path(folder: Path) -> None:
    """Settings are UTF-8 JSON: a path whose bytes are not UTF-8 could not be saved."""
    try:
        str(folder).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(folder).decode("utf-8", "backslashreplace")
        raise UnreadableFileError(
            shown,
            "the folder's name is not valid UTF-8 text, so DraftDeck could not remember "
            "it; rename the folder and add it again",
        ) from None


@dataclass(frozen=True)
class _ZipPlan:
    files: list[zipfile.ZipInfo]
    top: str | None  # the one folder every file sits in, stripped when unpacking
    total: int  # unpacked bytes, as the archive declares them


def _checked_members(archive: Path) -> _ZipPlan:
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
    return _ZipPlan(files, top, sum(i.file_size for i in files))


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


def _pack_name(archive: Path, name: str) -> str:
    """The folder name for a zipped pack: a leading "." would hide the pack from the
    library scan (and ".staging-" names are removed at start-up), so it is dropped."""
    visible = name.lstrip(". ")
    if not visible:
        raise UnsafeArchiveError(archive, f"{name!r} cannot be a pack name")
    return visible


def _check_unpacked_size(archive: Path, total: int, root: Path) -> None:
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


def _extract(
    archive: Path,
    plan: _ZipPlan,
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
