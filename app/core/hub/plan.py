"""What to download for a repo: its files at one revision, which are pack files, sizes.

The Hub API gives each file's size, git blob id and, for LFS files, sha256; that is
enough to verify every byte before anything is installed. File names are checked
here: a name that is absolute or climbs out of the pack folder refuses the whole repo.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils._validators import validate_repo_id

from app.core.infra.errors import HubError

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

    @property
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


def is_skipped(name: str, include_all: bool = False) -> bool:
    if include_all:
        return name == ".gitattributes"
    lowered = name.lower()
    return any(fnmatch.fnmatch(lowered, pattern) for pattern in SKIPPED_PATTERNS)


def build_plan(
    repo_id: str, revision: str, entries: list[PlanFile], include_all: bool = False
) -> RepoPlan:
    refused = sorted(f.path for f in entries if unsafe_name(f.path))
    if refused:
        raise HubError(
            f"{repo_id}: refused file names that would land outside the pack folder: "
            + ", ".join(repr(n) for n in refused),
            "unsafe_names",
        )
    keep = tuple(f for f in entries if not is_skipped(f.path, include_all))
    skipped = tuple(f for f in entries if is_skipped(f.path, include_all))
    return RepoPlan(repo_id, revision, keep, skipped)
