"""A target and its draft on a phone, linked: the target's `config.json` there names the
draft's recipe with `draft_config_path`, a path on the phone.

The phone app (TokForge's MNN build) opens the target's config.json and, when it says
`speculative_type: draftmodel`, loads the draft from the recipe that key names. The
packs' cards give it as "/path/to/config_cpu.json": only a push knows the real path,
so the push writes it into the phone's copy of config.json. The library's pack is never
changed: the phone's copy is made here, in a temporary folder, and pushed in place of
the pack's file, so the push's hashing, skipping and resuming treat it as the file that
belongs on the phone (a second push of the same pair finds it there and skips it).

A target pushed without a draft keeps the link its copy on the phone has (a recipe
pushed alone keeps the pair working).
"""

from __future__ import annotations

import posixpath
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.core.infra.errors import PhoneError
from app.core.pack.files import CONFIG
from app.core.pack.sendable import SendableFile, sendable_files
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Phone
from app.core.phone.destinations import pack_path
from app.core.recipe.files import RecipeDocument, draft_recipe_path, read_recipe

DRAFT_LINK = "draft_config_path"
SPECULATIVE = "speculative_type"
DRAFT_MODEL = "draftmodel"


def drafts(recipe: Mapping[str, Any]) -> bool:
    """The target's recipe asks the phone app to draft with a second model."""
    return recipe.get(SPECULATIVE) == DRAFT_MODEL


def target_drafts(pack: Path) -> bool:
    return drafts(read_recipe(pack / CONFIG))


def draft_link(root: str, draft: Path) -> str:
    """Where the draft's recipe lies on the phone once `draft` is pushed into `root`:
    config_cpu.json, or draft_config_cpu.json when that is its only recipe."""
    return posixpath.join(pack_path(root, draft.name), draft_recipe_path(draft).name)


def linked_draft_name(link: str) -> str:
    """The pack folder a link points into (the draft's name as pushed)."""
    return posixpath.basename(posixpath.dirname(link))


def phone_config(target: Path, link: str) -> bytes:
    """The target's config.json as it goes to the phone: the library's, in its own
    layout, with `draft_config_path` set to `link`."""
    document = RecipeDocument.load(target / CONFIG)
    return document.render({**document.data, DRAFT_LINK: link}).encode("utf-8")


@contextmanager
def with_phone_config(
    files: Sequence[SendableFile], target: Path, link: str | None
) -> Iterator[tuple[SendableFile, ...]]:
    """`files`, with config.json replaced by the phone's copy linking `link` (as is
    without a link or a config.json among them). The copy lives in a temporary folder
    for as long as the push runs."""
    if link is None or not any(f.rel == CONFIG for f in files):
        yield tuple(files)
        return
    folder = Path(tempfile.mkdtemp(prefix="draftdeck-phone-"))
    try:
        (folder / CONFIG).write_bytes(phone_config(target, link))
        [linked] = sendable_files(folder, [CONFIG])
        yield tuple(linked if f.rel == CONFIG else f for f in files)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def read_phone_recipe(phone: Phone, path: str) -> dict[str, Any] | None:
    """A JSON recipe on the phone; None when it is missing or not a JSON object."""
    return fs.read_json_object(phone, path)


def phone_link(phone: Phone, folders: Sequence[str]) -> str | None:
    """The `draft_config_path` of the first of `folders` whose config.json on the phone
    has one (the installed pack, then an interrupted push's copy)."""
    for folder in folders:
        recipe = read_phone_recipe(phone, posixpath.join(folder, CONFIG))
        link = recipe.get(DRAFT_LINK) if recipe is not None else None
        if isinstance(link, str) and link.startswith("/"):
            return link
    return None


def link_resolves(phone: Phone, link: str) -> bool:
    """`link` is a regular file on the phone."""
    return link in fs.file_sizes(phone, [link])


def check_link_target(draft: Path) -> None:
    """Refuse a draft whose recipe cannot be linked (a folder without one)."""
    recipe = draft_recipe_path(draft)
    if not recipe.is_file():
        raise PhoneError(
            f"{draft.name} has no draft recipe ({recipe.name}) for the target to name: "
            "choose a draft pack, or make its recipe on the Recipes page.",
            "no_draft_recipe",
        )
