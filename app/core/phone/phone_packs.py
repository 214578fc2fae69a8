"""The packs already on a phone: listed, compared with the library, deleted."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from app.core.infra.errors import DraftDeckError
from app.core.pack.bundle import BundleInfo
from app.core.pack.files import CONFIG, PHONE_MARKER, RECIPE_FILES
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Phone
from app.core.phone.destinations import PARTIAL, pack_path
from app.core.phone.local_files import wanted_files
from app.core.phone.pack_marker import not_ours, read_marker
from app.core.phone.phone_memory import EstimateModel, phone_ram
from app.core.phone.phone_recipes import PhoneRecipes, check_pack

SAME, DIFFERS, NOT_IN_LIBRARY, INCOMPLETE = "same", "differs", "not in library", "incomplete"


@dataclass(frozen=True)
class PhonePack:
    name: str
    path: str
    size: int
    files: int
    match: str  # SAME, DIFFERS (names, sizes or recipe keys), NOT_IN_LIBRARY, INCOMPLETE
    ours: bool = True  # has DraftDeck's marker: only then may DraftDeck delete it
    recipes: PhoneRecipes | None = None  # the phone-side recipe check (library packs)

    def to_json(self) -> dict[str, object]:
        record = asdict(self)
        record["recipes"] = self.recipes.to_json() if self.recipes is not None else None
        return record


def list_packs(
    phone: Phone,
    root: str,
    library: Mapping[str, BundleInfo],
    estimate: EstimateModel | None = None,
) -> list[PhonePack]:
    """Folders of `root` that hold a config.json, and interrupted pushes (`.partial`).

    "same" means the same file names, the same sizes for the model's files and the same
    recipe keys (phone_recipes: the draft link a push wrote is the phone's own) as the
    library's pack of that name; content is compared by sha256 when pushing, which is
    where it matters. With `estimate`, each pack's RAM need is checked against the
    phone's."""
    packs = []
    ram: int | None = None
    for entry in fs.list_dir(phone, root):
        if not entry.is_dir or entry.name.startswith("."):
            continue
        path = posixpath.join(root, entry.name)
        listing = {e.name: e.size for e in fs.list_dir(phone, path) if not e.is_dir}
        partial = entry.name.endswith(PARTIAL)
        if CONFIG not in listing and not partial:
            continue
        name = entry.name.removesuffix(PARTIAL) if partial else entry.name
        local = library.get(name)
        recipes = None
        if local is not None and not partial:
            if ram is None:
                ram = phone_ram(phone) if estimate is not None else 0
            recipes = _check(phone, path, listing, local, library, estimate, ram)
        match = INCOMPLETE if partial else _compare(listing, local, recipes)
        size, count = sum(listing.values()), len(listing)
        packs.append(
            PhonePack(entry.name, path, size, count, match, PHONE_MARKER in listing, recipes)
        )
    return sorted(packs, key=lambda p: p.name.lower())


def _check(
    phone: Phone,
    path: str,
    listing: Mapping[str, int],
    local: BundleInfo,
    library: Mapping[str, BundleInfo],
    estimate: EstimateModel | None,
    ram: int,
) -> PhoneRecipes | None:
    try:
        return check_pack(phone, path, listing, local, library, estimate, ram)
    except DraftDeckError:  # the library's pack changed under us: listed without the check
        return None


def _compare(
    listing: dict[str, int], local: BundleInfo | None, recipes: PhoneRecipes | None
) -> str:
    if local is None:
        return NOT_IN_LIBRARY
    # Recipes are compared by their keys: the phone's config.json holds its draft link.
    wanted = {f.name: f.size for f in wanted_files(local) if f.name not in RECIPE_FILES}
    shown = {
        name: size
        for name, size in listing.items()
        if not name.startswith(".") and name not in RECIPE_FILES
    }
    same_recipes = recipes.same if recipes is not None else _same_names(listing, local)
    return SAME if shown == wanted and same_recipes else DIFFERS


def _same_names(listing: Mapping[str, int], local: BundleInfo) -> bool:
    """Without a recipe check, at least the same recipe files."""
    return {n for n in listing if n in RECIPE_FILES} == set(local.recipe_files)


def delete_pack(phone: Phone, root: str, name: str) -> None:
    """Remove one pack folder (or an interrupted `.partial` one) from `root`; a folder
    without DraftDeck's marker is refused (see pack_marker)."""
    base = name.removesuffix(PARTIAL)
    path = pack_path(root, base) + (PARTIAL if name.endswith(PARTIAL) else "")
    if read_marker(phone, path) is None:
        raise not_ours(path, phone.name)
    fs.remove_tree(phone, path)
