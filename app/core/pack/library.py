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
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from app.core.infra.deletion import remove_tree
from app.core.infra.errors import (
    AlreadyExistsError,
    FileError,
    NotABundleError,
    UnreadableFileError,
    UnsafeArchiveError,
    WriteFailedError,
)
from app.core.infra.settings import Settings
from app.core.pack.bundle import BundleInfo, looks_like_bundle, read_bundle
from app.core.pack.files import CONFIG, LLM_MODEL

log = logging.getLogger("draftdeck.library")

STAGING_PREFIX = ".staging-"


@dataclass(frozen=True)
class PackEntry:
    path: Path
    by_reference: bool
    info: BundleInfo | None
    error: FileError | None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def ok(self) -> bool:
        return self.info is not None

    @property
    def status(self) -> str:
        return "ok" if self.error is None else str(self.error.problem)


def read_entry(path: Path, by_reference: bool) -> PackEntry:
    try:
        return PackEntry(path, by_reference, read_bundle(path), None)
    except FileError as exc:
        return PackEntry(path, by_reference, None, exc)


class Library:
    """Installed packs, backed by the library folder and the settings' references."""

    def __init__(self, settings: Settings, save: Callable[[Settings], None]) -> None:
        self.settings = settings
        self._save = save

    @property
    def root(self) -> Path:
        return self.settings.library_path()

    def set_root(self, folder: Path) -> None:
        self.settings.library_dir = str(Path(folder).resolve())
        self._save(self.settings)

    def pack_folders(self) -> list[tuple[Path, bool]]:
        """Every pack folder (and whether it is a reference), without reading the packs:
        for callers that only need paths."""
        found: list[tuple[Path, bool]] = []
        if self.root.is_dir():
            for child in sorted(self.root.iterdir()):
                if child.is_dir() and not child.name.startswith("."):
                    found.append((child, False))
        found += [(Path(ref), True) for ref in self.settings.references]
        return found

    def scan(self) -> list[PackEntry]:
        entries = [read_entry(path, by_reference=ref) for path, ref in self.pack_folders()]
        return sorted(entries, key=lambda e: (e.name.lower(), str(e.path)))

    def add_folder(self, folder: Path) -> list[PackEntry]:
        """Add a pack folder by reference, or every pack folder directly inside it."""
        folder = Path(folder).resolve()
        if not folder.is_dir():
            raise NotABundleError(folder, "folder not found")
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

    def import_zip(self, archive: Path) -> PackEntry:
        """Unpack a zipped pack into the library folder."""
        archive = Path(archive)
        members, top = _checked_members(archive)
        name = top or archive.stem
        dest = self.root / name
        if dest.exists():
            raise AlreadyExistsError(dest, f"a pack named {name!r} is already in the library")
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.root))
        try:
            _extract(archive, members, top, staging)
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


def _checked_members(archive: Path) -> tuple[list[zipfile.ZipInfo], str | None]:
    """The archive's file entries, refusing any that could escape the pack folder."""
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
            files.append(info)
    if not files:
        raise NotABundleError(archive, "the zip is empty")
    tops = {PurePosixPath(i.filename.replace("\\", "/")).parts[0] for i in files}
    nested = all(len(PurePosixPath(i.filename.replace("\\", "/")).parts) > 1 for i in files)
    top = tops.pop() if nested and len(tops) == 1 else None
    return files, top


def _extract(archive: Path, members: list[zipfile.ZipInfo], top: str | None, dest: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in members:
                parts = PurePosixPath(info.filename.replace("\\", "/")).parts
                relative = Path(*parts[1:]) if top else Path(*parts)
                target = dest / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
    except OSError as exc:
        raise WriteFailedError(
            dest, f"could not unpack {archive.name}: {exc.strerror or exc}"
        ) from None
    except (zipfile.BadZipFile, EOFError) as exc:
        raise UnreadableFileError(archive, f"damaged zip file ({exc})") from None
