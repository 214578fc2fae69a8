"""Where packs go on a phone: presets in resources/destinations.json, plus folders
the user added (kept in settings). Apps document few side-load folders, so these are
data, not code."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from functools import cache

from app.core.infra.errors import PhoneError
from app.core.infra.resources import read_text

PARTIAL = ".partial"  # a pack being copied; renamed away only when every file is verified


@dataclass(frozen=True)
class Destination:
    key: str
    name: str
    root: str
    note: str = ""


@cache
def preset_destinations() -> tuple[Destination, ...]:
    data = json.loads(read_text("destinations.json"))
    return tuple(
        Destination(d["key"], d["name"], d["root"], d.get("note", "")) for d in data["destinations"]
    )


def all_destinations(custom: list[str]) -> list[Destination]:
    presets = list(preset_destinations())
    known = {d.root for d in presets}
    extra = [
        Destination(f"custom:{root}", root, root, "A folder you added.")
        for root in custom
        if root not in known
    ]
    return presets + extra


def default_root() -> str:
    return preset_destinations()[0].root


def _has_control(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def check_root(root: str) -> str:
    """A destination folder as typed by a user, normalized; refused when empty, not
    absolute, the phone's root (`/`, `//`, `/..`) or holding control characters."""
    text = root.strip()
    if not text.startswith("/"):
        raise PhoneError(f"{root!r} is not a folder on the phone: give a path from /.", "bad_dest")
    # normpath keeps a leading "//" (POSIX leaves it to the system): Android does not.
    normal = "/" + posixpath.normpath(text).lstrip("/")
    if normal == "/" or _has_control(normal):
        raise PhoneError(f"{root!r} cannot hold packs: choose a folder below /.", "bad_dest")
    return normal


def pack_path(root: str, name: str) -> str:
    """Where the pack `name` goes in `root`; checked before anything is made on the phone."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or name.endswith(PARTIAL)
        or _has_control(name)
    ):
        raise PhoneError(f"{name!r} is not a usable pack folder name.", "bad_dest")
    return posixpath.join(check_root(root), name)
