"""One file from the Hub into a `.part` file: resumable, verified, cancellable.

huggingface_hub's own download restarts from zero after a restart and reports progress
every 10 MiB; this keeps what arrived in `<file>.part` and continues with a Range
request, hashes as it writes (hashing the kept prefix first when resuming), and checks
the result against the LFS sha256 or the git blob id before the file is renamed into
place. It uses the client's URL builder, auth headers and HTTP session.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from huggingface_hub import hf_hub_url
from huggingface_hub.utils._headers import build_hf_headers
from huggingface_hub.utils._http import get_session, hf_raise_for_status

from app.core.errors import DraftDeckError, HubError, WriteFailedError
from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import PlanFile

# httpx hands over what each socket read returned (at most 64 KiB): on a dropped
# connection no more than that is lost and fetched again.
CHUNK = 64 * 1024
RETRIES = 5
TIMEOUT = httpx2.Timeout(30.0, connect=10.0)


class DownloadCancelled(DraftDeckError):
    """The user paused or cancelled; what arrived so far stays in the .part file."""


class _RangeIgnored(Exception):
    """The server sent the whole file instead of the rest."""


def _hasher(plan_file: PlanFile) -> Any:
    if plan_file.sha256:
        return hashlib.sha256()
    digest = hashlib.sha1()  # git's blob id is sha1 by definition
    digest.update(b"blob %d\0" % plan_file.size)
    return digest


def _expected(plan_file: PlanFile) -> str | None:
    return plan_file.sha256 or plan_file.blob_id


def _hash_prefix(hasher: Any, path: Path) -> None:
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)


def download_file(
    config: HubConfig,
    repo_id: str,
    revision: str,
    plan_file: PlanFile,
    part: Path,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> None:
    """Fill `part` with the file's bytes and verify them; raises HubError on mismatch."""
    url = hf_hub_url(
        repo_id, plan_file.path, revision=revision, endpoint=config.resolved_endpoint()
    )
    headers = build_hf_headers(token=config.token)
    part.parent.mkdir(parents=True, exist_ok=True)
    if part.exists() and part.stat().st_size > plan_file.size:
        part.unlink()
    size = part.stat().st_size if part.exists() else 0
    hasher = _hasher(plan_file)
    if size:
        _hash_prefix(hasher, part)
    failures = 0
    while size < plan_file.size:
        request = dict(headers)
        if size:
            request["Range"] = f"bytes={size}-"
        try:
            size = _stream(
                url, request, part, size, hasher, on_bytes, cancelled, f"{repo_id}/{plan_file.path}"
            )
            failures = 0
        except httpx2.TransportError as exc:
            # A dropped connection: go on from what arrived. Every chunk written is also
            # hashed, so the file's size is where the next request starts.
            size = part.stat().st_size if part.exists() else 0
            failures += 1
            if failures > RETRIES:
                raise HubError(
                    f"{repo_id}/{plan_file.path}: the connection keeps failing ({exc}); "
                    "start the download again to resume",
                    "connection_lost",
                ) from None
            time.sleep(min(0.2 * failures, 2.0))
        except OSError as exc:
            raise WriteFailedError(part, f"could not write: {exc.strerror or exc}") from None
    if size != plan_file.size:
        raise HubError(
            f"{repo_id}/{plan_file.path}: got {size} bytes, expected {plan_file.size}",
            "size_mismatch",
        )
    expected = _expected(plan_file)
    if expected is not None and hasher.hexdigest() != expected:
        part.unlink()
        raise HubError(
            f"{repo_id}/{plan_file.path}: the downloaded bytes do not match the Hub's "
            f"{'sha256' if plan_file.sha256 else 'git blob id'}; the file was discarded",
            "corrupt",
        )


def _stream(
    url: str,
    headers: dict[str, str],
    part: Path,
    size: int,
    hasher: Any,
    on_bytes: Callable[[int], None],
    cancelled: Callable[[], bool],
    what: str,
) -> int:
    # Transport errors go to the caller's retry loop; HTTP errors become HubError.
    with get_session().stream(
        "GET", url, headers=headers, follow_redirects=True, timeout=TIMEOUT
    ) as response:
        with hub_errors(what):
            hf_raise_for_status(response)
        if size and response.status_code == 200:
            raise _RangeIgnored
        with part.open("ab") as out:
            for chunk in response.iter_bytes():
                if cancelled():
                    raise DownloadCancelled(what)
                out.write(chunk)
                hasher.update(chunk)
                size += len(chunk)
                on_bytes(len(chunk))
            out.flush()
            os.fsync(out.fileno())
    return size
