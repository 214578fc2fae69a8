"""The huggingface_hub calls DraftDeck makes, with its errors turned into clear messages.

The client does what it does well: endpoint (HF_ENDPOINT or an explicit mirror),
tokens (HF_TOKEN or one from settings), offline mode, error mapping. Only the byte
transfer is DraftDeck's own (transfer.py), for resume, progress and cancel.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx2
from huggingface_hub import HfApi, constants
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from app.core.hub.plan import PlanFile, RepoPlan, build_plan
from app.core.infra.errors import HubError
from app.core.infra.settings import Settings

API_TIMEOUT = 20.0  # seconds; a Hub that never answers must not hang a download


@dataclass(frozen=True)
class HubConfig:
    endpoint: str | None = None  # None: HF_ENDPOINT or huggingface.co
    token: str | bool | None = None  # None: HF_TOKEN or the login cache; False: none

    @classmethod
    def from_settings(cls, settings: Settings) -> HubConfig:
        """The user's token from settings; without one, HF_TOKEN or the login cache."""
        return cls(token=settings.hub_token or None)

    def resolved_endpoint(self) -> str:
        return (self.endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")

    def api(self) -> HfApi:
        return HfApi(endpoint=self.resolved_endpoint(), token=self.token)


@contextmanager
def hub_errors(what: str) -> Iterator[None]:
    """Map the client's exceptions to HubError with a sentence a user understands."""
    try:
        yield
    except (RepositoryNotFoundError, GatedRepoError) as exc:
        status = exc.response.status_code if exc.response is not None else None
        hint = " (a private or gated repo needs a token: set HF_TOKEN)" if status == 401 else ""
        raise HubError(f"{what}: repository not found{hint}", "not_found") from None
    except RevisionNotFoundError:
        raise HubError(f"{what}: that revision does not exist", "not_found") from None
    except EntryNotFoundError:
        raise HubError(f"{what}: file not found on the Hub", "not_found") from None
    except HFValidationError as exc:  # an id or revision the client will not send
        raise HubError(f"{what}: {exc}", "bad_repo_id") from None
    except OfflineModeIsEnabled:
        raise HubError(f"{what}: offline mode is on (HF_HUB_OFFLINE)", "offline") from None
    except HfHubHTTPError as exc:
        raise HubError(f"{what}: the Hub answered {exc}", "http_error") from None
    except httpx2.HTTPError as exc:
        raise HubError(f"{what}: could not reach the Hub ({exc})", "unreachable") from None


def fetch_plan(
    config: HubConfig, repo_id: str, revision: str | None = None, include_all: bool = False
) -> RepoPlan:
    """The files of `repo_id` at `revision` (default: main), with sizes and hashes."""
    with hub_errors(repo_id):
        info = config.api().model_info(
            repo_id, revision=revision, files_metadata=True, timeout=API_TIMEOUT
        )
    entries = [
        PlanFile(
            path=s.rfilename,
            size=int(s.size or 0),
            blob_id=s.blob_id,
            sha256=s.lfs.sha256 if s.lfs is not None else None,
        )
        for s in info.siblings or []
    ]
    if not info.sha:
        raise HubError(f"{repo_id}: the Hub did not say which revision this is", "http_error")
    return build_plan(repo_id, info.sha, entries, include_all)


def latest_revision(config: HubConfig, repo_id: str, revision: str | None = None) -> str:
    with hub_errors(repo_id):
        sha = config.api().model_info(repo_id, revision=revision, timeout=API_TIMEOUT).sha
    if not sha:
        raise HubError(f"{repo_id}: the Hub did not say which revision this is", "http_error")
    return sha


def collection_repos(config: HubConfig, slug: str) -> list[str]:
    """Model repos listed in a Hub collection."""
    with hub_errors(slug):
        collection = config.api().get_collection(slug)
    return [item.item_id for item in collection.items if item.item_type == "model"]
