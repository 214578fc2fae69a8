"""The packs already on a phone: listed, compared with the library, deleted."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from app.core.pack.bundle import BundleInfo
from app.core.pack.files import CONFIG, PHONE_MARKER
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Phone
from app.core.phone.destinations import PARTIAL, pack_path
from app.core.phone.local_files import wanted_files
from app.core.phone.pack_marker import not_ours, read_marker

SAME, DIFFERS, NOT_IN_LIBRARY, INCOMPLETE = "same", "differs", "not in library", "incomplete"


@dataclass(frozen=True)
class PhonePack:
    name: str
    path: str
    size: int
    files: int
    match: str  # SAME, DIFFERS (names or sizes), NOT_IN_LIBRARY, INCOMPLETE
    ours: bool = True  # has DraftDeck's marker: only then may DraftDeck delete it

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def list_packs(phone: Phone, root: str, library: Mapping[str, BundleInfo]) -> list[PhonePack]:
    """Folders of `root` that hold a config.json, and interrupted pushes (`.partial`).

    "same" means the same file names and sizes as the library's pack of that name;
    content is compared by sha256 when pushing, which is where it matters."""
    packs = []
    for entry in fs.list_dir(phone, root):
        if not entry.is_dir or entry.name.startswith("."):
            continue
        path = posixpath.join(root, entry.name)
        listing = {e.name: e.size for e in fs.list_dir(phone, path) if not e.is_dir}
        partial = entry.name.endswith(PARTIAL)
        if CONFIG not in listing and not partial:
            continue
        name = entry.name.removesuffix(PARTIAL) if partial else entry.name
        match = INCOMPLETE if partial else _compare(listing, library.get(name))
        size, count = sum(listing.values()), len(listing)
        packs.append(PhonePack(entry.name, path, size, count, match, PHONE_MARKER in listing))
    return sorted(packs, key=lambda p: p.name.lower())


def _compare(listing: dict[str, int], local: BundleInfo | None) -> str:
    if local is None:
        return NOT_IN_LIBRARY
    wanted = {f.name: f.size for f in wanted_files(local)}
    shown = {name: size for name, size in listing.items() if not name.startswith(".")}
    return SAME if shown == wanted else DIFFERS


def delete_pack(phone: Phone, root: str, name: str) -> None:
    """Remove one pack folder (or an interrupted `.partial` one) from `root`; a folder
    without DraftDeck's marker is refused (see pack_marker)."""
    base = name.removesuffix(PARTIAL)
    path = pack_path(root, base) + (PARTIAL if name.endswith(PARTIAL) else "")
    if read_marker(phone, path) is None:
        raise not_ours(path, phone.name)
    fs.remove_tree(phone, path)
