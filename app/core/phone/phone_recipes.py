"""The recipes of a pack on a phone, against the library's: which keys differ, whether
the draft the target names is there, and the RAM the phone's recipes need.

The phone's copy of a target's config.json holds its own `draft_config_path` (a push
writes it, pair_link): that key is the phone's, never a difference; whether it resolves
(a regular file on the phone) is said apart. The library's side is the pack's own recipe
files, read raw: this computer's settings (recipe/desktop_settings.py) are DraftDeck's
on this computer and never what a phone should have.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.pack.bundle import BundleInfo
from app.core.pack.files import CONFIG, RECIPE_FILES
from app.core.phone.adb import Phone
from app.core.phone.pair_link import DRAFT_LINK, link_resolves, linked_draft_name, read_phone_recipe
from app.core.phone.phone_memory import EstimateModel, ModelNeed, PhoneFit, model_need, phone_fit
from app.core.recipe.files import draft_recipe_path, read_recipe


class _Missing:
    """A key a recipe does not have (never equal to any JSON value)."""

    def __repr__(self) -> str:
        return "(not set)"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class RecipeDifference:
    file: str
    key: str
    phone: Any  # MISSING when the phone's copy lacks the key (or the file)
    library: Any  # MISSING when the library's lacks it

    def words(self) -> str:
        return f"{self.file}: {self.key}: {_shown(self.phone)} → {_shown(self.library)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "key": self.key,
            "phone": None if self.phone is MISSING else self.phone,
            "library": None if self.library is MISSING else self.library,
        }


def _shown(value: Any) -> str:
    return repr(MISSING) if value is MISSING else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class PhoneRecipes:
    """What the phone-side check found for one pack on a phone."""

    differences: tuple[RecipeDifference, ...]
    link: str | None  # the draft_config_path the phone's config.json holds
    link_ok: bool | None  # None: no link to check
    memory: PhoneFit | None  # None: not checked (no estimate, RAM unknown, pack unreadable)

    @property
    def same(self) -> bool:
        return not self.differences

    def lines(self) -> list[str]:
        """The check in words, a line each (phone → library for each key)."""
        lines = [d.words() for d in self.differences]
        if not lines:
            lines.append("Recipes: the same as the library's.")
        if self.link is not None:
            there = "is on the phone" if self.link_ok else "is NOT on the phone"
            lines.append(f"{DRAFT_LINK}: {self.link} ({there})")
        if self.memory is not None:
            lines.append(self.memory.message)
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "differences": [d.to_json() for d in self.differences],
            "draft_config_path": self.link,
            "link_resolves": self.link_ok,
            "memory": self.memory.to_json() if self.memory is not None else None,
        }


def compare_recipes(
    library: Mapping[str, Mapping[str, Any]], phone: Mapping[str, Mapping[str, Any] | None]
) -> tuple[RecipeDifference, ...]:
    """Keys whose values differ, per recipe file (a file missing on either side counts
    each key of the other as unset there). The target's link is the phone's own."""
    found: list[RecipeDifference] = []
    for name in [n for n in RECIPE_FILES if n in library or n in phone]:
        ours, theirs = library.get(name) or {}, phone.get(name) or {}
        for key in [*ours, *(k for k in theirs if k not in ours)]:
            if name == CONFIG and key == DRAFT_LINK:
                continue
            mine, other = ours.get(key, MISSING), theirs.get(key, MISSING)
            if (
                mine is MISSING
                or other is MISSING
                or mine != other
                or type(mine) is not type(other)
            ):
                found.append(RecipeDifference(name, key, other, mine))
    return tuple(found)


def check_pack(
    phone: Phone,
    folder: str,
    on_phone: Collection[str],
    local: BundleInfo,
    library: Mapping[str, BundleInfo],
    estimate: EstimateModel | None = None,
    ram: int = 0,
) -> PhoneRecipes:
    """The phone-side check of the pack in `folder` on the phone (holding the files
    `on_phone`), whose library pack is `local`; `library` finds the draft the link names;
    `ram` is the phone's (0: unknown)."""
    mine = {n: read_recipe(local.path / n) for n in RECIPE_FILES if n in local.recipe_files}
    theirs = {
        name: read_phone_recipe(phone, posixpath.join(folder, name))
        for name in RECIPE_FILES
        if name in on_phone
    }
    differences = compare_recipes(mine, theirs)
    config = theirs.get(CONFIG) or {}
    raw_link = config.get(DRAFT_LINK)
    link = raw_link if isinstance(raw_link, str) and raw_link else None
    link_ok = link_resolves(phone, link) if link is not None and link.startswith("/") else None
    if link is not None and link_ok is None:
        link_ok = False  # a relative or placeholder path resolves nowhere on a phone
    fit = None
    if estimate is not None and ram:
        usable = link if link_ok else None
        needs = _memory(phone, local, config, theirs, usable, library, estimate)
        fit = phone_fit(needs, ram, phone.name)
    return PhoneRecipes(differences, link, link_ok, fit)


def _memory(
    phone: Phone,
    local: BundleInfo,
    config: Mapping[str, Any],
    theirs: Mapping[str, Mapping[str, Any] | None],
    link: str | None,
    library: Mapping[str, BundleInfo],
    estimate: EstimateModel,
) -> list[ModelNeed]:
    """What the phone's recipes need: the pack alone, or the target and the draft its
    link names (when that draft is a library pack, whose model facts are known here)."""
    draft_recipe = draft_recipe_path(local.path).name
    own = {**config, **(theirs.get(draft_recipe) or {})} if local.role == "draft" else config
    draft = library.get(linked_draft_name(link)) if link is not None else None
    if draft is None or link is None:
        return [model_need(estimate, local.path, "pack", own)]
    draft_folder = posixpath.dirname(link)
    draft_config = read_phone_recipe(phone, posixpath.join(draft_folder, CONFIG)) or {}
    draft_run = {**draft_config, **(read_phone_recipe(phone, link) or {})}
    return [
        model_need(estimate, local.path, "target", config),
        model_need(estimate, Path(draft.path), "draft", draft_run),
    ]
