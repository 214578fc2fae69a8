"""Staging folders for downloads and the one rename that installs a pack.

A download lives in `<library>/.download-<owner>__<name>/` (hidden, so the library
never lists it): `plan.json` with the revision, and `files/` with `.part` files that
become real names only once verified. Installing renames `files/` to the pack folder,
so a partial or unverified download never appears in the library. An update sets the
installed copy aside, renames the new one in, then carries the user's edits and files
across (carry_over.py).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.hub.carry_over import carry_over, shipped_files
from app.core.hub.plan import RepoPlan
from app.core.infra.deletion import remove_tree
from app.core.infra.errors import AlreadyExistsError, FileError, WriteFailedError
from app.core.infra.jsonfile import atomic_write_json, read_json_object
from app.core.pack.files import SOURCE_FILE, installed_source

STAGING_PREFIX = ".download-"
PART = ".part"


def staging_dir(library: Path, repo_id: str) -> Path:
    return library / f"{STAGING_PREFIX}{repo_id.replace('/', '__')}"


def prepare_staging(library: Path, plan: RepoPlan) -> Path:
    """Reuse a staging folder of the same revision (to resume), else start clean."""
    staging = staging_dir(library, plan.repo_id)
    plan_file = staging / "plan.json"
    if staging.exists():
        try:
            same = read_json_object(plan_file).get("revision") == plan.revision
        except FileError:  # an unreadable plan means start over
            same = False
        if not same:
            try:
                remove_tree(staging)
            except OSError as exc:
                raise WriteFailedError(
                    staging, f"could not clear an older download: {exc.strerror or exc}"
                ) from None
    (staging / "files").mkdir(parents=True, exist_ok=True)
    atomic_write_json(plan_file, plan.to_json(), indent=2)
    return staging


def _keep_aside(library: Path, old: Path, folder_name: str) -> Path:
    """Rename an old copy out of the way under a name no later install reuses."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept = library / f".kept-{folder_name}-{stamp}"
    suffix = 1
    while kept.exists():
        suffix += 1
        kept = library / f".kept-{folder_name}-{stamp}-{suffix}"
    old.rename(kept)
    return kept


def discard_staging(library: Path, repo_id: str) -> None:
    remove_tree(staging_dir(library, repo_id), ignore_errors=True)


@dataclass(frozen=True)
class Installed:
    path: Path  # the pack folder
    notes: tuple[str, ...] = field(default=())  # what an update did with the user's files


def install(library: Path, plan: RepoPlan, endpoint: str) -> Installed:
    """Move the verified files into the library in one rename (two for an update)."""
    staging = staging_dir(library, plan.repo_id)
    files = staging / "files"
    atomic_write_json(
        files / SOURCE_FILE,
        {
            "repo": plan.repo_id,
            "revision": plan.revision,
            "endpoint": endpoint,
            "files": [f.to_json() for f in plan.files],
        },
        indent=2,
    )
    dest = library / plan.folder_name
    old: Path | None = None
    shipped = shipped_files(dest)
    if dest.exists():
        source = installed_source(dest)
        if source is None or source.get("repo") != plan.repo_id:
            raise AlreadyExistsError(dest, "a different pack with this name is installed")
        # An update: set the old copy aside so the swap is two renames.
        old = library / f".replaced-{plan.folder_name}"
        try:
            if old.exists():  # left by an update that did not finish: may hold user files
                _keep_aside(library, old, plan.folder_name)
            # Windows refuses while a file of the pack is open (say, loaded in a chat).
            dest.rename(old)
        except OSError as exc:
            raise WriteFailedError(
                dest, f"could not set the installed copy aside: {exc.strerror or exc}"
            ) from None
    try:
        files.rename(dest)
    except OSError as exc:
        if old is not None:
            old.rename(dest)
        raise WriteFailedError(dest, f"could not install: {exc.strerror or exc}") from None
    notes: list[str] = []
    if old is not None:
        notes, complete = carry_over(old, dest, shipped, plan)
        if complete:
            remove_tree(old, ignore_errors=True)
        else:  # something of the user's could not move: the old copy is kept, never deleted
            with contextlib.suppress(OSError):
                kept = _keep_aside(library, old, plan.folder_name)
                notes.append(f"some of your files could not be carried over; they are in {kept}")
    remove_tree(staging, ignore_errors=True)
    return Installed(dest, tuple(notes))
