"""The huggingface_hub calls DraftDeck makes, with its errors turned into clear messages.

The client does what it does well: endpoint (HF_ENDPOINT or an explicit mirror),
tokens (HF_TOKEN or one from settings), offline mode, error mapping. Only the byte
transfer is DraftDeck's own (transfer.py), for resume, progress and cancel.

Every call has deadlines: huggingface_hub 2.x's shared httpx client has none
(`timeout=None`), and its uploads (create_repo, preupload, the LFS batch and PUT, the
commit) pass none, so a Hub that stopped answering kept a publish waiting forever. The
client DraftDeck gives it (`set_client_factory`) connects within CONNECT_TIMEOUT and
fails after HUB_TIMEOUT seconds without a byte either way (DRAFTDECK_HUB_TIMEOUT sets
it; tests use a second or two). Such silence is not retried: the client retries a
timeout five times with back-off, which made one silent Hub a wait of six timeouts and
more; the user is told instead, and publishing or downloading again resumes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2
from huggingface_hub import HfApi, RepoFile, constants, set_client_factory
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils._http import hf_request_event_hook

from app.core.hub.plan import PlanFile, RepoPlan, build_plan
from app.core.infra.errors import HubError
from app.core.infra.settings import Settings

CONNECT_TIMEOUT = 10.0  # seconds to reach the Hub
# Seconds of silence while waiting for an answer or sending a body. Generous: the Hub
# may think for a while over the commit of a large repo.
HUB_TIMEOUT = 30.0
TIMEOUT_VARIABLE = "DRAFTDECK_HUB_TIMEOUT"
log = logging.getLogger("draftdeck.hub")


def hub_seconds() -> float:
    """HUB_TIMEOUT, or the seconds DRAFTDECK_HUB_TIMEOUT says."""
    try:
        seconds = float(os.environ.get(TIMEOUT_VARIABLE, ""))
    except ValueError:
        return HUB_TIMEOUT
    return seconds if 0 < seconds < float("inf") else HUB_TIMEOUT


def hub_timeout() -> httpx2.Timeout:
    seconds = hub_seconds()
    return httpx2.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))


class HubSilent(httpx2.TransportError):
    """The Hub said nothing within the deadline. A TransportError, not a timeout, so
    that huggingface_hub's back-off (which retries timeouts) passes it on at once."""


class _ClientWithDeadlines(httpx2.Client):
    def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        if all(v is None for v in request.extensions.get("timeout", {}).values()):
            # Asked for no deadline at all: list_repo_tree's pages pass timeout=None,
            # which httpx reads as "wait forever", not as "the client's default".
            request.extensions = {**request.extensions, "timeout": hub_timeout().as_dict()}
        try:
            return super().send(request, **kwargs)
        except httpx2.TimeoutException as exc:
            raise HubSilent(str(exc) or type(exc).__name__, request=request) from exc


def _client_with_deadlines() -> httpx2.Client:
    """huggingface_hub's own client (default_client_factory) with deadlines."""
    return _ClientWithDeadlines(
        event_hooks={"request": [hf_request_event_hook]},
        follow_redirects=True,
        timeout=hub_timeout(),
    )


# For the whole process: every Hub call DraftDeck makes goes through this module.
set_client_factory(_client_with_deadlines)


class HubUnreachable(HubError):
    """No connection to the Hub at all (offline, DNS, refused). The message says it in
    plain words; `reason` keeps the network's own words for the log and a tooltip."""

    def __init__(self, what: str, where: str, reason: str, words: str = "") -> None:
        words = words or f"no connection to {where}; check the network"
        super().__init__(f"{what}: {words}", "unreachable")
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
        try:
            yield
        except RuntimeError as exc:
            # The client wraps a failed LFS upload so ("Error while uploading 'x'").
            if isinstance(exc.__cause__, (HfHubHTTPError, httpx2.HTTPError)):
                raise exc.__cause__ from None
            raise
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
        reason = str(exc) or type(exc).__name__
        log.info("%s: %s: %s", what, where, reason)  # the message says it; the log keeps why
        if isinstance(exc, HubSilent) and not isinstance(exc.__cause__, httpx2.ConnectTimeout):
            seconds = hub_seconds()
            raise HubError(
                f"{what}: {where} stopped answering (nothing for {seconds:g} s)", "stalled"
            ) from None
        if isinstance(exc, (httpx2.ConnectError, HubSilent)):
            raise HubUnreachable(what, where, reason) from None
        raise HubUnreachable(
            what, where, reason, f"the connection to {where} broke off; check the network"
        ) from None


def fetch_plan(
    config: HubConfig, repo_id: str, revision: str | None = None, include_all: bool = False
) -> RepoPlan:
    """The files of `repo_id` at `revision` (default: main), with sizes and hashes.

    The revision's sha first, then its files from the tree listing, which the Hub gives
    in pages (1,000 entries a request). Not model_info with files_metadata: that is one
    answer for the whole repo (10 MB for 100,000 files), and json.loads of it held the
    GIL 60-150 ms in one C call, the window frozen for as long."""
    sha = latest_revision(config, repo_id, revision)
    with hub_errors(repo_id, config):
        entries = [
            PlanFile(
                path=entry.path,
                size=int(entry.size or 0),
                blob_id=entry.blob_id,
                sha256=entry.lfs.sha256 if entry.lfs is not None else None,
            )
            # Pinned to the sha: a push to the branch between two pages cannot mix
            # two revisions' files into one plan.
            for entry in config.api().list_repo_tree(repo_id, revision=sha, recursive=True)
            if isinstance(entry, RepoFile)
        ]
    return build_plan(repo_id, sha, entries, include_all)


def latest_revision(config: HubConfig, repo_id: str, revision: str | None = None) -> str:
    """The commit sha `revision` (default: main) names; only the sha is asked for, not
    the repo's list of files that the model info carries by default."""
    with hub_errors(repo_id, config):
        sha = (
            config.api()
            .model_info(repo_id, revision=revision, expand=["sha"], timeout=hub_seconds())
            .sha
        )
    if not sha:
        raise HubError(f"{repo_id}: the Hub did not say which revision this is", "http_error")
    return sha


def collection_repos(config: HubConfig, slug: str, title: str) -> list[str]:
    """Model repos listed in a Hub collection (named by its title in errors)."""
    with hub_errors(f"the collection “{title}”", config):
        collection = config.api().get_collection(slug)
    return [item.item_id for item in collection.items if item.item_type == "model"]
