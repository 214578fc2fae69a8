"""Publishing a pack folder to a Hub model repository with huggingface_hub.

What is uploaded is the pack as DraftDeck lists it (bundle.py: hidden files and folders
such as `.draftdeck-source.json`, `.draftdeck-original/` and the Hub client's `.cache`
are never part of it) without DraftDeck's own copies (`*.bak`, `*.before-update`). The
list is given to `upload_folder` as exact paths, so its own pattern rules cannot add a
file DraftDeck did not list.

The token is the user's: HF_TOKEN or the Hub's own login (`hf auth login`), unless
the HubConfig names one. A commit on the Hub lands whole or not at all, so an upload
stopped before its commit leaves the repo as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import get_token

from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import check_repo_id
from app.core.infra.errors import HubError
from app.core.pack.bundle import BundleFile, read_bundle
from app.core.pack.files import NOT_PACK_SUFFIXES


@dataclass(frozen=True)
class PublishPlan:
    folder: Path
    repo_id: str
    files: tuple[BundleFile, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class Published:
    repo_id: str
    commit: str
    url: str  # the repo's page
    private: bool


def publish_plan(folder: Path, repo_id: str) -> PublishPlan:
    """The files that would be uploaded; a folder that is no readable pack is refused."""
    check_repo_id(repo_id)
    info = read_bundle(folder)
    files = tuple(f for f in info.files if not f.name.endswith(NOT_PACK_SUFFIXES))
    return PublishPlan(folder, repo_id, files)


def exact_pattern(path: str) -> str:
    """An fnmatch pattern that matches `path` and nothing else."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


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
    config: HubConfig, plan: PublishPlan, private: bool = False, message: str | None = None
) -> Published:
    """Create the repo if needed (an existing one keeps its visibility) and upload the
    plan's files in one commit."""
    token = _token(config)
    api = config.api()
    what = f"Publishing to {plan.repo_id}"
    with hub_errors(what, config):
        repo_url = api.create_repo(
            plan.repo_id, token=token, private=private, exist_ok=True, repo_type="model"
        )
        commit = api.upload_folder(
            folder_path=plan.folder,
            repo_id=plan.repo_id,
            repo_type="model",
            token=token,
            allow_patterns=[exact_pattern(f.name) for f in plan.files],
            commit_message=message or f"Upload {plan.folder.name} with DraftDeck",
        )
    return Published(plan.repo_id, commit.oid, str(repo_url), private)
