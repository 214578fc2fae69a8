"""Publishing a pack folder to a Hub model repository with huggingface_hub.

What is uploaded is the pack as DraftDeck lists it (bundle.py: hidden files and folders
such as `.draftdeck-source.json`, `.draftdeck-export.json`, `.draftdeck-original/` and
the Hub client's `.cache` are never part of it) without DraftDeck's own copies (`*.bak`,
`*.before-update`), and only its regular files inside its folder (pack/sendable.py: a
link out of the pack refuses the publish, naming it). export_check.json goes up with
the folders it names on this computer cut to their names; one that cannot be read is
not uploaded (the publish says it is unreadable). The commit adds exactly those files,
each read from the file listed: nothing DraftDeck did not list goes up.

The token is the user's: HF_TOKEN or the Hub's own login (`hf auth login`), unless
the HubConfig names one. A commit on the Hub lands whole or not at all, so an upload
stopped before its commit leaves the repo as it was; what was sent of it stays on the
Hub's storage, and publishing again skips it (the LFS batch answers that it has them)
and makes the commit. A failure says how far the upload got and that.

Progress is told per file: huggingface_hub 2.x reports bytes only to its own terminal
bars (tqdm, or hf_xet's reporter), with no callback a caller can pass to
`upload_folder` or `create_commit`, and small files travel inside the commit request
itself. So the files are handed to `preupload_lfs_files` one at a time (a large file is
uploaded then; a small one is only looked at and goes with the commit), and the commit
follows: the same one commit `upload_folder` would make.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from huggingface_hub import CommitOperationAdd, get_token

from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import check_repo_id
from app.core.infra.errors import HubError
from app.core.infra.jsonfile import JSON_SIZE_LIMIT
from app.core.infra.units import format_bytes
from app.core.pack.bundle import read_bundle
from app.core.pack.export_check import (
    ExportVerdict,
    SavedExportCheck,
    read_export_check,
    without_local_paths,
)
from app.core.pack.files import EXPORT_CHECK, NOT_PACK_SUFFIXES
from app.core.pack.sendable import SendableFile, sendable_files


@dataclass(frozen=True)
class PublishPlan:
    folder: Path
    repo_id: str
    files: tuple[SendableFile, ...]
    export_check: SavedExportCheck | None  # the pack's export_check.json; None: never checked

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class Published:
    repo_id: str
    commit: str
    url: str  # the repo's page
    private: bool


@dataclass(frozen=True)
class UploadProgress:
    """How far an upload is, in whole files: `current` is the file being sent now ("" once
    every file is sent and the commit is being made); the counts are of files sent."""

    files_done: int
    files: int
    bytes_done: int
    total_bytes: int
    current: str = ""

    def words(self) -> str:
        sent = (
            f"{self.files_done} of {self.files} files sent "
            f"({format_bytes(self.bytes_done)} of {format_bytes(self.total_bytes)})"
        )
        if not self.current:
            return f"{sent}; making the commit (small files travel in it)…"
        return f"{sent}; sending {self.current}…"

    def to_json(self) -> dict[str, Any]:
        return {"progress": asdict(self)}

    @classmethod
    def from_json(cls, data: object) -> UploadProgress | None:
        """The progress `to_json` wrote, or None when `data` is not one."""
        fields = data.get("progress") if isinstance(data, dict) else None
        if not isinstance(fields, dict):
            return None
        try:
            progress = cls(**fields)
        except TypeError:  # other keys
            return None
        counts = (progress.files_done, progress.files, progress.bytes_done, progress.total_bytes)
        if not all(isinstance(n, int) for n in counts) or not isinstance(progress.current, str):
            return None
        return progress


Progress = Callable[[UploadProgress], None]


def publish_plan(folder: Path, repo_id: str) -> PublishPlan:
    """The files that would be uploaded; a folder that is no readable pack, or holds
    what is not one of its regular files, is refused."""
    check_repo_id(repo_id)
    info = read_bundle(folder)
    check = read_export_check(folder)
    unreadable = check is not None and check.verdict == ExportVerdict.UNREADABLE
    names = [
        f.name
        for f in info.files
        if not f.name.endswith(NOT_PACK_SUFFIXES) and not (unreadable and f.name == EXPORT_CHECK)
    ]
    return PublishPlan(folder, repo_id, sendable_files(folder, names), check)


def _token(config: HubConfig) -> str:
    if isinstance(config.token, str) and config.token:
        return config.token
    token = None if config.token is False else get_token()
    if not token:
        raise HubError(
            "Publishing needs a Hugging Face token with write access: set HF_TOKEN or "
            "log in with `hf auth login`",
            "no_token",
        )
    return token


def publish(
    config: HubConfig,
    plan: PublishPlan,
    private: bool = False,
    message: str | None = None,
    progress: Progress | None = None,
) -> Published:
    """Create the repo if needed (an existing one keeps its visibility) and upload the
    plan's files in one commit; `progress` hears before the small files, before each
    large one and before the commit (on this thread). A failure of the Hub's is a
    HubError that says how far the upload got and that publishing again finishes it."""
    token = _token(config)
    api = config.api()
    where: UploadProgress | None = None  # None until the repo is there

    def tell(now: UploadProgress) -> None:
        nonlocal where
        where = now
        if progress is not None:
            progress(now)

    try:
        with hub_errors(f"Publishing to {plan.repo_id}", config), ExitStack() as files:
            repo_url = api.create_repo(
                plan.repo_id, token=token, private=private, exist_ok=True, repo_type="model"
            )
            additions = _additions(plan, files)
            files_done = bytes_done = 0
            for group in _upload_groups(plan.files):
                name = group[0].rel if len(group) == 1 else f"{len(group)} small files"
                count = len(plan.files)
                tell(UploadProgress(files_done, count, bytes_done, plan.total_bytes, name))
                api.preupload_lfs_files(
                    plan.repo_id,
                    [additions[plan.files.index(f)] for f in group],
                    token=token,
                    repo_type="model",
                    free_memory=False,
                )
                files_done += len(group)
                bytes_done += sum(f.size for f in group)
            tell(UploadProgress(files_done, len(plan.files), bytes_done, plan.total_bytes))
            commit = api.create_commit(
                plan.repo_id,
                additions,
                commit_message=message or f"Upload {plan.folder.name} with DraftDeck",
                token=token,
                repo_type="model",
            )
    except HubError as exc:
        if where is None:
            raise
        raise HubError(f"{exc.message}. {_how_far(plan, where)}", exc.code) from None
    return Published(plan.repo_id, commit.oid, str(repo_url), private)


def _how_far(plan: PublishPlan, where: UploadProgress) -> str:
    """What a failed upload left, and what to do next, in words."""
    again = "publish again to finish: what is on the Hub already is not sent again"
    if not where.current:
        return (
            f"All {where.files} files were sent; it stopped at the commit, so {plan.repo_id} "
            f"may not have it yet: {again}."
        )
    return (
        f"It stopped while sending {where.current}, after {where.files_done} of "
        f"{where.files} files ({format_bytes(where.bytes_done)} of "
        f"{format_bytes(where.total_bytes)}). Nothing was committed, so {plan.repo_id} is "
        f"as it was: {again}."
    )


SMALL_FILE = 8 << 20  # bytes: files below go up together (one round of Hub requests)


def _upload_groups(files: tuple[SendableFile, ...]) -> list[tuple[SendableFile, ...]]:
    """The files in the order they are sent: the small ones in one request (each of
    huggingface_hub's pre-uploads is several round trips to the Hub), then each large
    one alone, so progress moves with every large file."""
    small = tuple(f for f in files if f.size < SMALL_FILE)
    large = [(f,) for f in files if f.size >= SMALL_FILE]
    return ([small] if small else []) + large


def _additions(plan: PublishPlan, files: ExitStack) -> list[CommitOperationAdd]:
    """One addition per planned file, at its path in the pack, read from the very file
    listed (open in `files` until the commit is made)."""
    additions = []
    for file in plan.files:
        handle = files.enter_context(file.open())
        content: bytes | BinaryIO = handle
        if file.rel == EXPORT_CHECK:
            content = without_local_paths(handle.read(JSON_SIZE_LIMIT), file.path)
        additions.append(CommitOperationAdd(path_in_repo=file.rel, path_or_fileobj=content))
    return additions
