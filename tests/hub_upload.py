"""The upload half of the local Hub stand-in (tests/hub_server.py): the endpoints that
huggingface_hub 2.x's ``create_repo`` and ``upload_folder`` call on the classic LFS path
(with ``HF_HUB_DISABLE_XET=1``; the Xet path talks to a content-addressed store this
stand-in does not have):

- ``POST /api/repos/create`` (``{"name", "organization", "visibility"}``; 409 with its url
  when it exists)
- ``POST /api/validate-yaml`` (the README's header, parsed with PyYAML)
- ``POST /api/models/{repo}/preupload/{rev}``: each file's upload mode (``lfs`` above the
  hub's LFS threshold, else ``regular``) and the oid it has now, if any
- ``POST /{repo}.git/info/lfs/objects/batch``: basic transfer, a PUT to the *cdn* origin
  (another origin, like S3) and a verify action; no actions for a blob already stored
- ``PUT`` on the cdn ``/upload/{sha256}`` (the body's sha256 must match), then
  ``POST /{repo}.git/info/lfs/objects/verify``
- ``POST /api/models/{repo}/commit/{rev}``: the NDJSON commit (``header``, ``file`` in
  base64, ``lfsFile`` by oid, ``deletedFile``); a new revision with every file it names

Every call but the cdn's PUT (a presigned URL on the Hub) needs the hub's token.
``UploadState.hold`` (an Event) makes the cdn keep each PUT waiting until it is set, so
a test can interrupt an upload in the middle; ``UploadState.commits`` lists the commits.

Faults (plain attributes of ``UploadState``, may be changed while the servers run):
``stall`` names steps that take their whole request and then never answer (until the
hub closes): ``"create"``, ``"preupload"``, ``"batch"``, ``"put"``, ``"commit"`` (before
the commit is made) and ``"committed"`` (after: the answer is what gets lost); a
stalled request stays unanswered when the stall is lifted;
``fail_puts`` answers every PUT 500 (with ``Retry-After: 0``, so the client's retries
come a second apart rather than after its 23 s of back-off); ``drop_puts`` cuts every PUT's
connection halfway through its body. ``puts_started`` counts the PUTs.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yaml

if TYPE_CHECKING:
    from tests.hub_server import FakeHub, _Handler

LFS_THRESHOLD = 1000  # bytes; FakeHub.add_repo's default, so uploads look like added repos


@dataclass
class UploadState:
    hold: threading.Event | None = None  # PUTs wait for it when set to an Event
    stall: set[str] = field(default_factory=set)
    fail_puts: bool = False
    drop_puts: bool = False
    puts_started: int = 0
    commits: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, bytes] = field(default_factory=dict)  # sha256 -> uploaded content


def state(hub: FakeHub) -> UploadState:
    found: UploadState | None = getattr(hub, "_upload_state", None)
    if found is None:
        found = UploadState()
        hub._upload_state = found  # type: ignore[attr-defined]
    return found


def _body(handler: _Handler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().strip().split(b";")[0], 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


def _step(segments: list[str], cdn: bool) -> str:
    """Which upload step a request is, as ``UploadState.stall`` names them."""
    if cdn:
        return "put"
    if segments[:3] == ["api", "repos", "create"]:
        return "create"
    if segments[:2] == ["api", "models"] and "preupload" in segments:
        return "preupload"
    if segments[:2] == ["api", "models"] and "commit" in segments:
        return "commit"
    return "batch" if segments[-4:] == ["info", "lfs", "objects", "batch"] else ""


def _stall(hub: FakeHub, step: str) -> None:
    """When ``step`` stalls, never answer this request: not even once the stall is
    over (a commit made late would race the next publish), only hang up at close."""
    if step in state(hub).stall:
        hub._stopping.wait()
        raise ConnectionAbortedError(f"{step} stalled")  # the handler closes the connection


def _drop_halfway(handler: _Handler) -> None:
    """Take half of the body, then cut the connection, as a network that fails does."""
    handler.rfile.read(int(handler.headers.get("Content-Length") or 0) // 2)
    handler.close_connection = True
    with contextlib.suppress(OSError):
        handler.connection.shutdown(socket.SHUT_RDWR)


def handle(handler: _Handler, segments: list[str]) -> None:
    """Route one POST or PUT (the caller maps _HttpError to an error answer)."""
    from tests.hub_server import _HttpError

    hub = handler.server.hub
    upload = state(hub)
    step = _step(segments, handler.server.role == "cdn")
    if step == "put" and upload.drop_puts:
        _drop_halfway(handler)
        return
    body = _body(handler)
    _stall(hub, step)
    if handler.server.role == "cdn":  # like a presigned S3 URL: the href is the pass
        if handler.command == "PUT" and len(segments) == 2 and segments[0] == "upload":
            _put(hub, segments[1], body)
            handler._send_json({}, False)
            return
        raise _HttpError(404, "Not found")
    if not handler._auth():
        raise _HttpError(401, "Invalid credentials in Authorization header")
    data = (
        json.loads(body) if body and "ndjson" not in handler.headers.get("Content-Type", "") else {}
    )
    if step == "create":
        made = _create(hub, data)
        # The Hub's 409 names the repo too: create_repo(exist_ok=True) reads its url.
        handler._send_json(made, False, 200 if made.pop("created") else 409)
    elif segments[:2] == ["api", "validate-yaml"]:
        _validate_yaml(handler, data)
    elif step == "preupload":
        repo = unquote("/".join(segments[2 : segments.index("preupload")]))
        handler._send_json(_preupload(hub, repo, data), False)
    elif step == "commit":
        repo = unquote("/".join(segments[2 : segments.index("commit")]))
        made = _commit(hub, repo, body)
        _stall(hub, "committed")
        handler._send_json(made, False)
    elif step == "batch":
        handler._send_json(_batch(hub, data), False)
    elif segments[-4:] == ["info", "lfs", "objects", "verify"]:
        if data.get("oid") not in state(hub).pending and hub._blob(data.get("oid", ""), "") is None:
            raise _HttpError(404, "Object not uploaded")
        handler._send_json({}, False)
    else:
        raise _HttpError(404, f"Not found: {'/'.join(segments)}")


def _create(hub: FakeHub, data: dict[str, Any]) -> dict[str, Any]:

    repo_id = "/".join(p for p in (data.get("organization"), data.get("name")) if p)
    if repo_id in hub._repo_ids():
        url = f"{hub.endpoint}/{repo_id}"
        return {"error": "You already created this model repo", "url": url, "created": False}
    attributes = (
        b"*.mnn filter=lfs diff=lfs merge=lfs -text\n*.weight filter=lfs diff=lfs merge=lfs -text\n"
    )
    hub.add_repo(
        repo_id,
        {".gitattributes": attributes},
        private=data.get("visibility") == "private" or bool(data.get("private")),
        tags=(),
        library_name=None,
    )
    return {"url": f"{hub.endpoint}/{repo_id}", "name": repo_id, "id": repo_id, "created": True}


def _validate_yaml(handler: _Handler, data: dict[str, Any]) -> None:
    text = str(data.get("content", ""))
    errors: list[dict[str, str]] = []
    if text.startswith("---\n"):
        header = text[4:].split("\n---", 1)[0]
        try:
            parsed = yaml.safe_load(header)
        except yaml.YAMLError as exc:
            errors.append({"message": f"YAML: {exc}"})
        else:
            if parsed is not None and not isinstance(parsed, dict):
                errors.append({"message": "metadata must be a mapping"})
    handler._send_json({"errors": errors, "warnings": []}, False, 400 if errors else 200)


def _preupload(hub: FakeHub, repo_id: str, data: dict[str, Any]) -> dict[str, Any]:
    _repo, rev = hub._lookup(repo_id, "main", authorized=True)
    files = []
    for item in data.get("files", []):
        existing = rev.files.get(item["path"])
        files.append(
            {
                "path": item["path"],
                "uploadMode": "lfs" if int(item["size"]) > LFS_THRESHOLD else "regular",
                "shouldIgnore": False,
                "oid": existing.etag if existing is not None else None,
            }
        )
    return {"files": files, "commitOid": rev.sha}


def _batch(hub: FakeHub, data: dict[str, Any]) -> dict[str, Any]:
    objects = []
    for item in data.get("objects", []):
        oid, size = str(item["oid"]), int(item["size"])
        answer: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
        if hub._blob(oid, "") is None and oid not in state(hub).pending:
            answer["actions"] = {
                "upload": {"href": f"{hub.cdn_endpoint}/upload/{oid}", "header": {}},
                "verify": {"href": f"{hub.endpoint}/repo.git/info/lfs/objects/verify"},
            }
        objects.append(answer)
    return {"transfer": "basic", "objects": objects}


def _put(hub: FakeHub, oid: str, body: bytes) -> None:
    from tests.hub_server import _HttpError

    upload = state(hub)
    with hub._lock:
        upload.puts_started += 1
    if upload.hold is not None:
        while not upload.hold.wait(0.05) and not hub._stopping.is_set():
            pass
    if upload.fail_puts:
        raise _HttpError(500, "Internal Server Error", retry_after=0)
    if hashlib.sha256(body).hexdigest() != oid:
        raise _HttpError(400, "The uploaded content does not match its oid")
    with hub._lock:
        upload.pending[oid] = body


def _commit(hub: FakeHub, repo_id: str, body: bytes) -> dict[str, Any]:
    from tests.hub_server import _HttpError

    repo, rev = hub._lookup(repo_id, "main", authorized=True)
    files = {path: f.content for path, f in rev.files.items()}
    header: dict[str, Any] = {}
    upload = state(hub)
    for line in body.splitlines():
        item = json.loads(line)
        value = item["value"]
        if item["key"] == "header":
            header = value
        elif item["key"] == "file":
            files[value["path"]] = base64.b64decode(value["content"])
        elif item["key"] == "lfsFile":
            stored = upload.pending.get(value["oid"])
            known = hub._blob(value["oid"], value["path"])
            content = stored if stored is not None else (known.content if known else None)
            if content is None:
                raise _HttpError(422, f"LFS object {value['oid']} was never uploaded")
            files[value["path"]] = content
        elif item["key"] in ("deletedFile", "deletedFolder"):
            files.pop(value["path"], None)
    # Files above the threshold are LFS files, as preupload said they would be.
    sha = hub.add_repo(
        repo_id,
        files,
        lfs_threshold=LFS_THRESHOLD,
        private=repo.private,
        gated=repo.gated,
        tags=("mnn",),
        library_name="mnn",
    )
    upload.commits.append({"repo": repo_id, "sha": sha, "summary": header.get("summary")})
    return {
        "commitOid": sha,
        "commitUrl": f"{hub.endpoint}/{repo_id}/commit/{sha}",
        "success": True,
        "pullRequestUrl": None,
    }


def card_data(files: dict[str, Any]) -> dict[str, Any]:
    """The README's YAML header as the Hub's model info gives it (``cardData``)."""
    readme = files.get("README.md")
    text = readme.content.decode("utf-8", "replace") if readme is not None else ""
    if not text.startswith("---\n"):
        return {}
    parsed = yaml.safe_load(text[4:].split("\n---", 1)[0])
    return {"cardData": parsed} if isinstance(parsed, dict) else {}
