"""Publishing a pack folder to a Hub model repository with huggingface_hub.

What is uploaded is the pack as DraftDeck lists it (bundle.py: hidden files and folders
such as `.draftdeck-source.json`, `.draftdeck-original/` and the Hub client's `.cache`
are never part of it) without DraftDeck's own copies (`*.bak`, `*.before-update`). The
commit adds exactly those files, one by one: nothing DraftDeck did not list goes up.

The token is the user's: HF_TOKEN or the Hub's own login (`hf auth login`), unless
the HubConfig names one. A commit on the Hub lands whole or not at all, so an upload
stopped before its commit leaves the repo as it was.

Progress is told per file: huggingface_hub 2.x reports bytes only to its own terminal
bars (tqdm, or hf_xet's reporter), with no callback a caller can pass to
`upload_folder` or `create_commit`, and small files travel inside the commit request
itself. So the files are handed to `preupload_lfs_files` one at a time (a large file is
uploaded then; a small one is only looked at and goes with the commit), and the commit
follows: the same one commit `upload_folder` would make.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import CommitOperationAdd, get_token

from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import check_repo_id
from app.core.infra.errors import HubError, MissingFileError
from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleFile, read_bundle
from app.core.pack.export_check import SavedExportCheck, read_export_check
from app.core.pack.files import NOT_PACK_SUFFIXES


@dataclass(frozen=True)
class PublishPlan:
    folder: Path
    repo_id: str
    files: tuple[BundleFile, ...]
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
    """The files that would be uploaded; a folder that is no readable pack is refused."""
    check_repo_id(repo_id)
    info = read_bundle(folder)
    files = tuple(f for f in info.files if not f.name.endswith(NOT_PACK_SUFFIXES))
    return PublishPlan(folder, repo_id, files, read_export_check(folder))


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
    large one and before the commit (on this thread)."""
    token = _token(config)
    api = config.api()
    tell = progress or (lambda _: None)
    what = f"Publishing to {plan.repo_id}"
    with hub_errors(what, config):
        repo_url = api.create_repo(
            plan.repo_id, token=token, private=private, exist_ok=True, repo_type="model"
        )
        additions = _additions(plan)
        files_done = bytes_done = 0
        for group in _upload_groups(plan.files):
            name = group[0].name if len(group) == 1 else f"{len(group)} small files"
            tell(UploadProgress(files_done, len(plan.files), bytes_done, plan.total_bytes, name))
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
    return Published(plan.repo_id, commit.oid, str(repo_url), private)


SMALL_FILE = 8 << 20  # bytes: files below go up together (one round of Hub requests)


def _upload_groups(files: tuple[BundleFile, ...]) -> list[tuple[BundleFile, ...]]:
    """The files in the order they are sent: the small ones in one request (each of
    huggingface_hub's pre-uploads is several round trips to the Hub), then each large
    one alone, so progress moves with every large file."""
    small = tuple(f for f in files if f.size < SMALL_FILE)
    large = [(f,) for f in files if f.size >= SMALL_FILE]
    return ([small] if small else []) + large


def _additions(plan: PublishPlan) -> list[CommitOperationAdd]:
    """One addition per planned file, at its path in the pack; a file gone since the
    plan was made is said, naming it."""
    additions = []
    for file in plan.files:
        path = plan.folder / file.name
        if not path.is_file():
            raise MissingFileError(path, "left the pack folder before it was uploaded")
        additions.append(CommitOperationAdd(path_in_repo=file.name, path_or_fileobj=path))
    return additions
