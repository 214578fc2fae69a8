"""The packs installed on this computer.

Packs live as folders in the library folder, or anywhere else when the user adds a
folder by reference (it is read in place and never moved or deleted by us). Zip files
are unpacked into a hidden staging folder first and renamed into place in one step, so
a half-unpacked pack never shows up.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.infra.deletion import remove_tree
from app.core.infra.errors import (
    AlreadyExistsError,
    FileError,
    NotABundleError,
    UnreadableFileError,
    UsageError,
    WriteFailedError,
)
from app.core.infra.settings import Settings
from app.core.pack.bundle import BundleInfo, looks_like_bundle, read_bundle
from app.core.pack.export_check import ExportVerdict, SavedExportCheck, read_export_check
from app.core.pack.files import CONFIG, LLM_MODEL
from app.core.pack.folder_checks import require_folder
from app.core.pack.folder_stamp import PackStamp, folder_stamp
from app.core.pack.pack_names import display_names, place
from app.core.pack.zip_unpack import ImportCancelled as ImportCancelled
from app.core.pack.zip_unpack import (
    ImportProgress,
    check_unpacked_size,
    checked_members,
    extract,
    pack_name,
)

log = logging.getLogger("draftdeck.library")

STAGING_PREFIX = ".staging-"


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
        """A pack folder, or the name of a readable pack in the library (or its label
        in the lists, pack_names.py), as its folder (None: neither). Reads the library
        when `text` is no folder; UsageError when the name fits two packs."""
        path = Path(text)
        if path.is_dir():
            return path.resolve()
        entries = self.scan()
        labels = display_names(entries)
        found = [e for e in entries if e.ok and text in (e.name, labels[e.path])]
        if len(found) > 1:
            listed = "".join(f"\n  {e.path}  ({place(e)})" for e in found)
            raise UsageError(
                f"{text!r} names {len(found)} packs in the library:{listed}\n"
                "Name the one you mean by its folder instead (a path is accepted).",
                "ambiguous_name",
            )
        return found[0].path if found else None

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
        plan = checked_members(archive)
        name = pack_name(archive, plan.top or archive.stem)
        dest = self.root / name
        if dest.exists():
            raise AlreadyExistsError(dest, f"a pack named {name!r} is already in the library")
        self.root.mkdir(parents=True, exist_ok=True)
        check_unpacked_size(archive, plan.total, self.root)
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.root))
        try:
            extract(archive, plan, staging, progress, cancel)
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
