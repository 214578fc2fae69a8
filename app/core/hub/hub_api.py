"""The huggingface_hub calls DraftDeck makes, with its errors turned into clear messages.

The client does what it does well: endpoint (HF_ENDPOINT or an explicit mirror),
tokens (HF_TOKEN or one from settings), offline mode, error mapping. Only the byte
transfer is DraftDeck's own (transfer.py), for resume, progress and cancel.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

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
log = logging.getLogger("draftdeck.hub")


class HubUnreachable(HubError):
    """No connection to the Hub at all (offline, DNS, refused). The message says it in
    plain words; `reason` keeps the network's own words for the log and a tooltip."""

    def __init__(self, what: str, where: str, reason: str) -> None:
        super().__init__(f"{what}: no connection to {where}; check the network", "unreachable")
        self.where = where
        self.reason = reason


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

    def place(self) -> str:
        """The Hub's host as a user knows it: huggingface.co, or the endpoint set."""
        host = urlsplit(self.resolved_endpoint()).netloc or self.resolved_endpoint()
        return host if host == "huggingface.co" else f"{host} (the Hub endpoint set)"

    def api(self) -> HfApi:
        return HfApi(endpoint=self.resolved_endpoint(), token=self.token)


@contextmanager
def hub_errors(what: str, config: HubConfig | None = None) -> Iterator[None]:
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
        log.warning("%s: %s", what, exc)  # the client's text names the URL; the user's does not
        response = exc.response
        said = f"HTTP {response.status_code} {response.reason_phrase}".strip()
        raise HubError(f"{what}: the Hub refused ({said})", "http_error") from None
    except httpx2.HTTPError as exc:
        where = config.place() if config is not None else "the Hub"
        log.warning("%s: no connection to %s: %s", what, where, exc)
        raise HubUnreachable(what, where, str(exc) or type(exc).__name__) from None


def fetch_plan(
    config: HubConfig, repo_id: str, revision: str | None = None, include_all: bool = False
) -> RepoPlan:
    """The files of `repo_id` at `revision` (default: main), with sizes and hashes."""
    with hub_errors(repo_id, config):
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
    with hub_errors(repo_id, config):
        sha = config.api().model_info(repo_id, revision=revision, timeout=API_TIMEOUT).sha
    if not sha:
        raise HubError(f"{repo_id}: the Hub did not say which revision this is", "http_error")
    return sha


def collection_repos(config: HubConfig, slug: str, title: str) -> list[str]:
    """Model repos listed in a Hub collection (named by its title in errors)."""
    with hub_errors(f"the collection “{title}”", config):
        collection = config.api().get_collection(slug)
    return [item.item_id for item in collection.items if item.item_type == "model"]
