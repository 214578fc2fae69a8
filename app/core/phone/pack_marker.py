"""Which folders on a phone DraftDeck made, and which files in them it put there.

Every pack folder a push creates (`<dest>` and `<dest>.partial`) holds PHONE_MARKER, a
small JSON file listing the pack files DraftDeck put there. DraftDeck only deletes or
replaces inside a folder that has it, and only what it lists (plus its own temporary
copies): a user's folder that happens to have a pack's name (`/sdcard/Music`) is refused
with the reason, and a file a user put into a pack folder stays.

Packs pushed by DraftDeck versions before the marker have none. Such a folder is
recognised as ours when it holds nothing but files of the pack being pushed, each with
the library's sha256 (so nothing in it can be the user's); the push then adopts it and
writes the marker. Any other folder without the marker (an older pack that has since
changed in the library included) is refused: the user deletes it by hand, and the
Phone page's delete refuses it too, saying so.
"""

from __future__ import annotations

import json
import posixpath
import uuid
from collections.abc import Collection

from app.core.infra.errors import PhoneError
from app.core.pack.files import PHONE_MARKER
from app.core.phone import remote_fs as fs
from app.core.phone.adb import Phone
from app.core.phone.sync_send import send_bytes

TEMP_SUFFIX = ".draftdeck-partial"  # every copy of ours still under a temporary name
MADE_BY = "DraftDeck"


def not_ours(folder: str, phone_name: str) -> PhoneError:
    return PhoneError(
        f"{folder} on {phone_name} was not made by DraftDeck (it has no {PHONE_MARKER}), so "
        "DraftDeck will not change or delete anything in it. Choose another destination or "
        "rename the pack; if an older DraftDeck pushed it, delete it on the phone by hand "
        "and push again.",
        "not_ours",
    )


def read_marker(phone: Phone, folder: str) -> frozenset[str] | None:
    """The files the marker in `folder` lists; None without a (readable) marker."""
    record = fs.read_json_object(phone, posixpath.join(folder, PHONE_MARKER))
    if record is None or record.get("made_by") != MADE_BY:
        return None
    files = record.get("files")
    if not isinstance(files, list):
        return None
    return frozenset(name for name in files if isinstance(name, str))


def write_marker(phone: Phone, folder: str, pack: str, files: Collection[str]) -> None:
    """Mark `folder` as ours, listing `files`; written under a temporary name and
    renamed, so a cut never leaves a folder of ours without its marker."""
    record = {"made_by": MADE_BY, "pack": pack, "files": sorted(files)}
    data = (json.dumps(record, indent=1) + "\n").encode("utf-8")
    final = posixpath.join(folder, PHONE_MARKER)
    temp = f"{final}.{uuid.uuid4().hex[:8]}{TEMP_SUFFIX}"
    send_bytes(phone, data, temp)
    fs.move(phone, temp, final)


def claim(phone: Phone, folder: str, verified: Collection[str]) -> frozenset[str]:
    """The files of an existing `folder` that DraftDeck may replace or delete: those its
    marker lists, or, without one, all of them when every entry is a file in `verified`
    (pack files whose copy there has the library's sha256: an older DraftDeck's push).
    PhoneError "not_ours" for any other folder."""
    listed = read_marker(phone, folder)
    if listed is not None:
        return listed
    entries = fs.list_dir(phone, folder)
    if all(not e.is_dir and e.name in verified for e in entries):
        return frozenset(e.name for e in entries)
    raise not_ours(folder, phone.name)


def merge_into(
    phone: Phone, dest: str, partial: str, wanted: set[str], ours: frozenset[str]
) -> None:
    """Bring the verified files `wanted` and whatever the user put into `dest` over
    to `partial`, then remove `dest`, which holds only what is ours by then."""
    for rel in sorted(wanted):
        target = posixpath.join(partial, rel)
        fs.make_dirs(phone, [posixpath.dirname(target)])
        fs.move(phone, posixpath.join(dest, rel), target)
    mine = {rel.split("/", 1)[0] for rel in ours | wanted} | {PHONE_MARKER}
    taken = {e.name for e in fs.list_dir(phone, partial)}
    for entry in fs.list_dir(phone, dest):
        if entry.name not in mine and not entry.name.endswith(TEMP_SUFFIX):
            if entry.name in taken:  # never overwrite: refuse instead
                raise PhoneError(
                    f"{posixpath.join(dest, entry.name)} was not put there by DraftDeck "
                    f"and {partial} has a file of that name: move it away and push again.",
                    "not_ours",
                )
            fs.move(phone, posixpath.join(dest, entry.name), partial)
    fs.remove_tree(phone, dest)
