"""What to download for a repo: its files at one revision, which are pack files, sizes.

The Hub API gives each file's size, git blob id and, for LFS files, sha256; that is
enough to verify every byte before anything is installed. File names are checked
here: a name that is absolute or climbs out of the pack folder refuses the whole repo;
a name DraftDeck gives its own files, or repo plumbing (.git, .cache), is skipped with
its reason (a listing of other files is still a pack worth having).

A repo may list 100,000 files: everything here is one pass over them (no per-file
pattern loop, no message naming them all).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils._validators import validate_repo_id

from app.core.infra.errors import HubError
from app.core.pack.files import NOT_PACK_SUFFIXES, OWN_NAME_PREFIX

# Export artifacts and repo plumbing that no runtime reads: ONNX exports, and the JSON
# dump of the graph that MNN's exporter (3.1.x) leaves beside llm.mnn (1-17 MB; MNN
# loads llm.mnn itself).
SKIPPED_PATTERNS = (
    "*.onnx",
    "*.onnx.data",
    "*.onnx_data",
    "onnx/*",
    "*/onnx/*",
    "llm.mnn.json",
    "*/llm.mnn.json",
    ".gitattributes",
)
# What the skipped files are, in the words of the Downloads page and `--all-files`.
SKIPPED_KINDS = "ONNX exports, llm.mnn.json graph dumps"
_EXPORT_FILE = re.compile("|".join(fnmatch.translate(p) for p in SKIPPED_PATTERNS))
# Folders of repo plumbing: git's, and the Hub client's download state.
PLUMBING_FOLDERS = (".git", ".cache")
# Why a file is not fetched, as the plan shows it.
EXPORT_REASON = "an export file no runtime reads"
PLUMBING_REASON = "repository plumbing, not part of a pack"
OWN_NAME_REASON = "named like DraftDeck's own files"
# How many refused names an error names (a listing may hold thousands).
NAMED_AT_MOST = 5


@dataclass(frozen=True)
class PlanFile:
    path: str
    size: int
    blob_id: str | None  # git blob sha1 (for small files)
    sha256: str | None  # LFS sha256 (for large files)

    @property
    def lfs(self) -> bool:
        return self.sha256 is not None

    def to_json(self) -> dict[str, str | int | None]:
        return {
            "path": self.path,
            "size": self.size,
            "blob_id": self.blob_id,
            "sha256": self.sha256,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlanFile:
        return cls(str(data["path"]), int(data["size"]), data.get("blob_id"), data.get("sha256"))


@dataclass(frozen=True)
class RepoPlan:
    repo_id: str
    revision: str  # the commit sha the files belong to
    files: tuple[PlanFile, ...]
    skipped: tuple[PlanFile, ...] = field(default=())

    @cached_property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def folder_name(self) -> str:
        return self.repo_id.split("/")[-1]

    def to_json(self) -> dict[str, object]:
        return {
            "repo": self.repo_id,
            "revision": self.revision,
            "files": [f.to_json() for f in self.files],
            "skipped": [f.to_json() for f in self.skipped],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RepoPlan:
        return cls(
            str(data["repo"]),
            str(data["revision"]),
            tuple(PlanFile.from_json(f) for f in data["files"]),
            tuple(PlanFile.from_json(f) for f in data.get("skipped", ())),
        )


def unsafe_name(name: str) -> bool:
    """A server-given path that could land outside the pack folder."""
    if not name or "\\" in name or "\0" in name or name.startswith("/"):
        return True
    if len(name) > 1 and name[1] == ":":
        return True
    return any(part in ("..", "") for part in name.split("/"))


def check_repo_id(repo_id: str) -> None:
    """HubError unless `repo_id` is an `owner/name` the Hub accepts (and a safe folder)."""
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        valid = False
    else:
        valid = repo_id.count("/") == 1 and not unsafe_name(repo_id)
    if not valid:
        raise HubError(
            f"{repo_id!r} is not of the form owner/name (letters, digits, '-', '_' and '.'; "
            "neither part may start or end with '-' or '.')",
            "bad_repo_id",
        )


def _own_name(part: str) -> bool:
    """A file name DraftDeck gives its own files in a pack folder (files.py): its records
    (.draftdeck-source.json says where a pack came from), a recipe's backup (restored
    over the user's recipe), and the temporary files of a save (.NAME.*.tmp, which the
    next save removes)."""
    return (
        part.startswith(OWN_NAME_PREFIX)
        or part.endswith(NOT_PACK_SUFFIXES)
        or (part.startswith(".") and part.endswith(".tmp"))
    )


def skip_reason(name: str, include_all: bool = False) -> str | None:
    """Why the file `name` is not fetched (None: it is). Case does not matter: on
    Windows and macOS `.DraftDeck-Source.json` is the same file as ours."""
    parts = name.lower().split("/")
    if any(part in PLUMBING_FOLDERS for part in parts) or parts[-1] == ".gitattributes":
        return PLUMBING_REASON
    if any(_own_name(part) for part in parts):
        return OWN_NAME_REASON
    if not include_all and _EXPORT_FILE.match(name.lower()):
        return EXPORT_REASON
    return None


def is_skipped(name: str, include_all: bool = False) -> bool:
    return skip_reason(name, include_all) is not None


def some_names(names: list[str]) -> str:
    """The first few of `names`, quoted, and how many more there are."""
    shown = ", ".join(repr(n) for n in names[:NAMED_AT_MOST])
    more = len(names) - NAMED_AT_MOST
    return f"{shown} and {more:,} more" if more > 0 else shown


def build_plan(
    repo_id: str, revision: str, entries: list[PlanFile], include_all: bool = False
) -> RepoPlan:
    """The files to fetch and the ones skipped, each sorted by path."""
    keep: list[PlanFile] = []
    skipped: list[PlanFile] = []
    refused: list[str] = []
    twice: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        # One name twice, or two names Windows and macOS cannot tell apart (case): which
        # file would the pack hold?
        folded = entry.path.casefold()
        if folded in seen:
            twice.append(entry.path)
        seen.add(folded)
        if unsafe_name(entry.path):
            refused.append(entry.path)
        elif is_skipped(entry.path, include_all):
            skipped.append(entry)
        else:
            keep.append(entry)
    if refused:
        raise HubError(
            f"{repo_id}: refused file names that would land outside the pack folder: "
            + some_names(sorted(refused)),
            "unsafe_names",
        )
    if twice:
        raise HubError(
            f"{repo_id}: the Hub lists files more than once (or in names that differ only "
            "in case, which Windows and macOS cannot hold apart): " + some_names(sorted(twice)),
            "unsafe_names",
        )

    def by_path(f: PlanFile) -> str:
        return f.path

    return RepoPlan(
        repo_id, revision, tuple(sorted(keep, key=by_path)), tuple(sorted(skipped, key=by_path))
    )
