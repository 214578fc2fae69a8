"""A small local Hugging Face Hub for tests, built on the standard library only.

``FakeHub`` runs two HTTP servers on 127.0.0.1: the "hub" origin (the endpoint to give
huggingface_hub) and a "cdn" origin on another port, where large (LFS) files are served
after a 302 from ``/{repo}/resolve/{rev}/{path}``, as on huggingface.co. It answers the
calls that the real huggingface_hub 2.x client makes:

- ``GET /api/models/{repo}`` and ``/api/models/{repo}/revision/{rev}`` (``?blobs=true``,
  ``?expand=sha`` for only the properties named)
- ``GET /api/models/{repo}/tree/{rev}[/{path}]`` (``?recursive=true|false``), in pages of
  TREE_PAGE entries (TREE_PAGE_EXPANDED with ``?expand=true``) with a ``Link: <…>;
  rel="next"`` header whose URL carries a ``cursor``, as the Hub pages it
- ``HEAD``/``GET /{repo}/resolve/{rev}/{path}`` (Range, 206, 302 to the cdn for LFS files)
- ``HEAD``/``GET`` on the cdn ``/lfs/{sha256}/{quoted path}`` (Range, 206)
- ``GET /api/collections/{slug}``
- the upload calls of ``create_repo`` and ``upload_folder`` (tests/hub_upload.py)

Errors carry the ``X-Error-Code`` header that ``hf_raise_for_status`` maps to
``RepositoryNotFoundError``, ``RevisionNotFoundError``, ``RemoteEntryNotFoundError``
and ``GatedRepoError``.

Switches (plain attributes, may be changed while the servers run): ``throttle_bytes_per_s``,
``drop_after_bytes`` (the next answer for a path breaks off after so many bytes),
``always_drop_after_bytes`` (every answer does), ``corrupt``, ``served_size`` (a path's
bytes cut or zero-padded to this length, while the listing keeps the true size and hash),
``hostile_names``, ``ignore_range`` (paths answered with the whole file, 200, whatever
the Range header asks), ``drop_tree_pages`` (page number of a tree listing, 0 first: how
many more of its answers break off halfway) and ``stall_tree_pages`` (pages never
answered). Counters: ``bytes_served`` and ``requests``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests import hub_upload

__all__ = ["DEFAULT_TOKEN", "FakeHub", "HubFile", "git_blob_sha1"]

DEFAULT_TOKEN = "hf_test_token"
CHUNK_SIZE = 16 * 1024
_EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)
_TRUE = {"1", "true", "yes"}
# Entries per page of a tree listing, as the Hub caps them: 1,000, or 50 with expand=true
# (huggingface_hub 2.4.0's list_repo_tree and _iter_repo_tree_pages say so).
TREE_PAGE = 1000
TREE_PAGE_EXPANDED = 50
_Listing = list[dict[str, Any]] | None  # a tree listing's entries; None: no such folder


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob with this content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _lfs_pointer(sha256: str, size: int) -> bytes:
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
    )


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _object_id(text: str) -> str:
    """A 24-hex id, like the Hub's database ids."""
    return hashlib.sha1(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class HubFile:
    """One file of one revision of a repo."""

    path: str
    content: bytes
    is_lfs: bool
    sha256: str
    blob_id: str  # git oid: of the content, or of the LFS pointer file for LFS files
    pointer_size: int | None

    @classmethod
    def make(cls, path: str, content: bytes, lfs_threshold: int) -> HubFile:
        sha256 = hashlib.sha256(content).hexdigest()
        if len(content) > lfs_threshold:
            pointer = _lfs_pointer(sha256, len(content))
            return cls(path, content, True, sha256, git_blob_sha1(pointer), len(pointer))
        return cls(path, content, False, sha256, git_blob_sha1(content), None)

    @property
    def size(self) -> int:
        return len(self.content)

    @property
    def etag(self) -> str:
        """Unquoted ETag: the sha256 for LFS files, the git blob sha1 otherwise."""
        return self.sha256 if self.is_lfs else self.blob_id

    def lfs_json(self) -> dict[str, Any]:
        return {"oid": self.sha256, "size": self.size, "pointerSize": self.pointer_size}


@dataclass(frozen=True)
class _Revision:
    sha: str
    files: Mapping[str, HubFile]
    last_modified: str


@dataclass
class _Repo:
    repo_id: str
    private: bool
    gated: bool
    created_at: str
    revisions: list[_Revision] = field(default_factory=list)  # oldest first; last is "main"
    tags: list[str] = field(default_factory=list)
    library_name: str | None = "mnn"
    downloads: int = 0
    likes: int = 0


@dataclass(frozen=True)
class _Collection:
    slug: str
    title: str
    repo_ids: tuple[str, ...]
    description: str | None


class _HttpError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        commit: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.commit = commit
        self.retry_after = retry_after


class _Server(ThreadingHTTPServer):
    """One origin. Tracks its open connections so that closing never waits on keep-alive."""

    daemon_threads = True
    block_on_close = False  # the stdlib would only join non-daemon threads: we join our own

    def __init__(self, hub: FakeHub, role: str) -> None:
        self.hub = hub
        self.role = role
        self._open: set[socket.socket] = set()
        self._handlers: list[threading.Thread] = []
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"FakeHub-{self.role}-handler",
            daemon=True,
        )
        with self._open_lock:
            if isinstance(request, socket.socket):
                self._open.add(request)
            self._handlers = [t for t in self._handlers if t.is_alive()]
            self._handlers.append(thread)
        thread.start()

    def server_close(self) -> None:
        super().server_close()
        with self._open_lock:
            handlers = list(self._handlers)
        for thread in handlers:
            thread.join(timeout=5)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        if isinstance(request, socket.socket):
            with self._open_lock:
                self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients hang up on purpose in these tests."""

    def drop_connections(self) -> None:
        with self._open_lock:
            conns = list(self._open)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        self._dispatch(head=False)

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    def do_POST(self) -> None:
        self._upload()

    def do_PUT(self) -> None:
        self._upload()

    def _upload(self) -> None:
        """create_repo and upload_folder's calls: tests/hub_upload.py."""
        split = urlsplit(self.path)
        self.server.hub._record(self.command, split.path, None)
        try:
            hub_upload.handle(self, split.path.split("/")[1:])
        except _HttpError as error:
            self._send_error(error, False)
        except OSError:
            self.close_connection = True  # the client went away

    # -- routing ------------------------------------------------------------------------------

    def _dispatch(self, head: bool) -> None:
        hub = self.server.hub
        split = urlsplit(self.path)
        hub._record(self.command, split.path, self.headers.get("Range"))
        every = parse_qs(split.query)
        query = {k: v[-1] for k, v in every.items()}
        segments = split.path.split("/")[1:]
        try:
            if self.server.role == "cdn":
                self._cdn(segments, head)
            elif segments[:2] == ["api", "models"]:
                self._api_models(segments[2:], query, every.get("expand", []), head)
            elif segments[:2] == ["api", "collections"]:
                self._collection(unquote("/".join(segments[2:])), head)
            elif "resolve" in segments[1:3]:
                self._resolve(segments, head)
            else:
                raise _HttpError(404, f"Not found: {split.path}")
        except _HttpError as error:
            self._send_error(error, head)
        except OSError:
            self.close_connection = True  # the client went away

    def _api_models(
        self, rest: list[str], query: dict[str, str], expand: list[str], head: bool
    ) -> None:
        repo, rest = self._split_repo(rest)
        if not rest:
            revision = "main"
        elif rest[0] == "revision" and len(rest) >= 2:
            revision = unquote("/".join(rest[1:]))
        elif rest[0] == "tree" and len(rest) >= 2:
            self._tree(repo, unquote(rest[1]), unquote("/".join(rest[2:])).strip("/"), query, head)
            return
        else:
            raise _HttpError(404, f"Not found: {'/'.join(rest)}")
        blobs = query.get("blobs", "").lower() in _TRUE
        info = self.server.hub._model_info(repo, revision, self._auth(), blobs)
        if expand:  # as on the Hub: only the properties asked for, besides the ids
            info = {k: v for k, v in info.items() if k in {"_id", "id", *expand}}
        self._send_json(info, head)

    def _split_repo(self, segments: list[str]) -> tuple[str, list[str]]:
        """Repo ids are "name" or "namespace/name": prefer a known repo, else guess two parts."""
        names = [unquote(s) for s in segments]
        known = self.server.hub._repo_ids()
        if len(names) >= 2 and f"{names[0]}/{names[1]}" in known:
            return f"{names[0]}/{names[1]}", segments[2:]
        if names and names[0] in known:
            return names[0], segments[1:]
        keywords = {"revision", "tree", "resolve", "paths-info", "refs", "commits"}
        if len(names) >= 2 and names[1] not in keywords:
            return f"{names[0]}/{names[1]}", segments[2:]
        return (names[0] if names else ""), segments[1:]

    def _tree(
        self, repo_id: str, revision: str, path: str, query: dict[str, str], head: bool
    ) -> None:
        """One page of the listing, and a Link to the next one, as the Hub pages it."""
        hub = self.server.hub
        repo, rev = hub._lookup(repo_id, revision, self._auth())
        recursive = query.get("recursive", "").lower() in _TRUE
        expand = query.get("expand", "").lower() in _TRUE
        entries = hub._listing(repo, rev, path, recursive)
        if entries is None:
            raise _HttpError(404, f"{path} does not exist on {revision}", "EntryNotFound", rev.sha)
        size = TREE_PAGE_EXPANDED if expand else TREE_PAGE
        cursor = query.get("cursor", "")
        start = int(cursor) if cursor.isdigit() else 0
        page = start // size
        headers: dict[str, str] = {}
        if start + size < len(entries):
            where = quote(f"{repo_id}/tree/{revision}" + (f"/{path}" if path else ""))
            flags = f"recursive={str(recursive).lower()}&expand={str(expand).lower()}"
            url = f"{hub.endpoint}/api/models/{where}?{flags}&cursor={start + size}"
            headers["Link"] = f'<{url}>; rel="next"'
        if page in hub.stall_tree_pages:
            hub._stopping.wait()  # never answers while the stand-in runs
            return
        drop = hub._take_tree_drop(page)
        self._send_json(entries[start : start + size], head, headers=headers, drop=drop)

    def _resolve(self, segments: list[str], head: bool) -> None:
        hub = self.server.hub
        at = segments.index("resolve", 1)
        repo_id = "/".join(unquote(s) for s in segments[:at])
        if len(segments) < at + 3:
            raise _HttpError(404, "Missing revision or path")
        revision = unquote(segments[at + 1])
        path = unquote("/".join(segments[at + 2 :]))
        repo, rev = hub._lookup(repo_id, revision, self._auth())
        if repo.gated and not self._auth():
            raise _HttpError(
                401,
                f"Access to model {repo_id} is restricted. You must have access to it and be"
                " authenticated to access it. Please log in.",
                "GatedRepo",
            )
        file = hub._listed_files(repo, rev).get(path)
        if file is None:
            raise _HttpError(404, "Entry not found", "EntryNotFound", rev.sha)
        headers = {"X-Repo-Commit": rev.sha, "ETag": f'"{file.etag}"'}
        if file.is_lfs:
            location = f"{hub.cdn_endpoint}/lfs/{file.sha256}/{quote(file.path, safe='')}"
            body = f"Found. Redirecting to {location}".encode()
            self.send_response(302)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Location", location)
            self.send_header("X-Linked-Etag", f'"{file.sha256}"')
            self.send_header("X-Linked-Size", str(file.size))
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return
        self._send_file(file, head, headers)

    def _cdn(self, segments: list[str], head: bool) -> None:
        if len(segments) < 3 or segments[0] != "lfs":
            raise _HttpError(404, "Not found")
        file = self.server.hub._blob(segments[1], unquote("/".join(segments[2:])))
        if file is None:
            raise _HttpError(404, "Not found")
        name = file.path.rsplit("/", 1)[-1]
        self._send_file(
            file,
            head,
            {
                "ETag": f'"{file.sha256}"',
                "Content-Disposition": f'attachment; filename="{quote(name)}";',
            },
        )

    def _collection(self, slug: str, head: bool) -> None:
        self._send_json(self.server.hub._collection_json(slug), head)

    # -- responses ----------------------------------------------------------------------------

    def _auth(self) -> bool:
        return self.headers.get("Authorization") == f"Bearer {self.server.hub.token}"

    def _send_json(
        self,
        data: object,
        head: bool,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        drop: bool = False,
    ) -> None:
        """The answer; with `drop`, only its first half, then the connection is cut."""
        body = json.dumps(data).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if head:
            return
        self.wfile.write(body[: len(body) // 2] if drop else body)
        if drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    def _send_error(self, error: _HttpError, head: bool) -> None:
        body = json.dumps({"error": error.message}).encode()
        self.send_response(error.status)
        if error.code is not None:
            self.send_header("X-Error-Code", error.code)
        self.send_header("X-Error-Message", error.message)
        if error.commit is not None:
            self.send_header("X-Repo-Commit", error.commit)
        if error.retry_after is not None:
            self.send_header("Retry-After", str(error.retry_after))
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_file(self, file: HubFile, head: bool, headers: Mapping[str, str]) -> None:
        hub = self.server.hub
        data = hub._served_bytes(file)
        total = len(data)
        start, end, status = 0, total - 1, 200
        wanted = None if file.path in hub.ignore_range else self.headers.get("Range")
        if wanted:
            match = _RANGE.match(wanted)
            first, last = match.groups() if match else ("", "")
            if first:
                start = int(first)
                end = min(int(last), total - 1) if last else total - 1
            elif last:
                start = max(total - int(last), 0)
            if not match or (not first and not last) or start >= total or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{total}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        body = memoryview(data)[start : end + 1]  # not a copy: packs of GBs are served
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{total}")
        self.end_headers()
        if head:
            return
        limit = hub._take_drop(file.path, len(body))
        sent = 0
        stop = len(body) if limit is None else limit
        while sent < stop:
            rate = hub.throttle_bytes_per_s
            size = CHUNK_SIZE if not rate else max(1, min(CHUNK_SIZE, rate // 10))
            chunk = body[sent : min(sent + size, stop)]
            self.wfile.write(chunk)
            sent += len(chunk)
            hub._count(file.path, len(chunk))
            if rate and hub._stopping.wait(len(chunk) / rate):
                break
        if limit is not None or sent < len(body):
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)


class FakeHub:
    """A local Hub (main origin + cdn origin) for tests. Use as a context manager."""

    def __init__(self, token: str = DEFAULT_TOKEN) -> None:
        self.token = token
        # Switches: plain attributes, may be changed while the servers run.
        self.throttle_bytes_per_s: int | None = None
        self.drop_after_bytes: dict[str, int] = {}
        self.always_drop_after_bytes: dict[str, int] = {}
        self.corrupt: set[str] = set()
        self.served_size: dict[str, int] = {}
        self.ignore_range: set[str] = set()
        self.hostile_names: dict[str, list[str]] = {}
        self.drop_tree_pages: dict[int, int] = {}  # page (0 first): how many more cuts
        self.stall_tree_pages: set[int] = set()
        # Counters.
        self.bytes_served: dict[str, int] = {}
        self.requests: list[tuple[str, str, str | None]] = []

        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._repos: dict[str, _Repo] = {}
        self._blobs: dict[str, HubFile] = {}  # sha256 -> an LFS file with that content
        self._collections: dict[str, _Collection] = {}
        # Tree listings made once, then paged: (repo, sha, hostile names, path, recursive).
        self._listings: dict[tuple[str, str, tuple[str, ...], str, bool], _Listing] = {}
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> FakeHub:
        if self._servers:
            return self
        self._stopping.clear()
        self._servers = [_Server(self, "hub"), _Server(self, "cdn")]
        for server in self._servers:
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"FakeHub-{server.role}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)
        return self

    def close(self) -> None:
        self._stopping.set()
        for server in self._servers:
            server.shutdown()  # stop accepting
        for server in self._servers:
            server.drop_connections()  # wake handlers blocked on keep-alive connections
            server.server_close()  # joins the handler threads
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers = []
        self._threads = []

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def endpoint(self) -> str:
        """The main ("hub") origin, e.g. http://127.0.0.1:PORT."""
        if not self._servers:
            raise RuntimeError("FakeHub is not running")
        return self._servers[0].origin

    @property
    def cdn_endpoint(self) -> str:
        """The origin that serves LFS files after the 302."""
        if not self._servers:
            raise RuntimeError("FakeHub is not running")
        return self._servers[1].origin

    # -- content ------------------------------------------------------------------------------

    def add_repo(
        self,
        repo_id: str,
        files: Mapping[str, bytes],
        revision_sha: str | None = None,
        lfs_threshold: int = 1000,
        *,
        private: bool = False,
        gated: bool = False,
        tags: Iterable[str] = ("mnn",),
        library_name: str | None = "mnn",
        downloads: int = 0,
        likes: int = 0,
    ) -> str:
        """Add a repo, or push a new revision of it (which becomes "main"). Returns the sha."""
        made = {path: HubFile.make(path, content, lfs_threshold) for path, content in files.items()}
        if revision_sha is None:
            digest = hashlib.sha1(f"commit {repo_id}\n".encode())
            for path in sorted(made):
                digest.update(f"{path}\0{made[path].blob_id}\n".encode())
            revision_sha = digest.hexdigest()
        if not re.fullmatch(r"[0-9a-f]{40}", revision_sha):
            raise ValueError(f"revision_sha must be 40 lowercase hex digits: {revision_sha!r}")
        with self._lock:
            repo = self._repos.get(repo_id)
            if repo is None:
                repo = _Repo(repo_id, private, gated, _iso(_EPOCH))
            repo.private, repo.gated = private, gated
            repo.tags, repo.library_name = list(tags), library_name
            repo.downloads, repo.likes = downloads, likes
            stamp = _iso(_EPOCH + timedelta(hours=len(repo.revisions)))
            revision = _Revision(revision_sha, made, stamp)
            repo.revisions = [r for r in repo.revisions if r.sha != revision_sha] + [revision]
            for file in made.values():
                if file.is_lfs:
                    self._blobs.setdefault(file.sha256, file)
            self._repos[repo_id] = repo
            self._listings.clear()  # a revision pushed again under its sha may differ
        return revision_sha

    def add_folder(self, repo_id: str, folder: Path, **kwargs: Any) -> str:
        """Add a repo with every file under ``folder`` (paths relative to it, with "/")."""
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }
        return self.add_repo(repo_id, files, **kwargs)

    def remove_repo(self, repo_id: str) -> None:
        with self._lock:
            self._repos.pop(repo_id, None)
            self._listings.clear()

    def sha(self, repo_id: str) -> str:
        """The current ("main") commit sha of a repo."""
        with self._lock:
            return self._repos[repo_id].revisions[-1].sha

    def file(self, repo_id: str, path: str, revision: str = "main") -> HubFile:
        """The file as the Hub stores it (sizes, blob id, sha256, LFS or not)."""
        repo, rev = self._lookup(repo_id, revision, authorized=True)
        return self._listed_files(repo, rev)[path]

    def add_collection(
        self, slug: str, title: str, repo_ids: Iterable[str], description: str | None = None
    ) -> None:
        """Slugs look like "owner/title-0123456789abcdef01234567"."""
        with self._lock:
            self._collections[slug] = _Collection(slug, title, tuple(repo_ids), description)

    def reset_counters(self) -> None:
        with self._lock:
            self.bytes_served.clear()
            self.requests.clear()

    # -- used by the handlers -----------------------------------------------------------------

    def _record(self, method: str, path: str, range_header: str | None) -> None:
        with self._lock:
            self.requests.append((method, path, range_header))

    def _count(self, path: str, n: int) -> None:
        with self._lock:
            self.bytes_served[path] = self.bytes_served.get(path, 0) + n

    def _take_drop(self, path: str, body_size: int) -> int | None:
        """How many bytes to send before hanging up, if a drop is armed for this path."""
        with self._lock:
            always = self.always_drop_after_bytes.get(path)
            if always is not None and always < body_size:
                return max(always, 0)
            limit = self.drop_after_bytes.get(path)
            if limit is None or limit >= body_size:
                return None
            del self.drop_after_bytes[path]
            return max(limit, 0)

    def _take_tree_drop(self, page: int) -> bool:
        """Whether this answer for this page of a tree listing breaks off."""
        with self._lock:
            left = self.drop_tree_pages.get(page, 0)
            if left > 0:
                self.drop_tree_pages[page] = left - 1
            return left > 0

    def _listing(self, repo: _Repo, rev: _Revision, path: str, recursive: bool) -> _Listing:
        """Every entry of a tree listing, folders first (None: no such folder). Made in
        one pass over the files, and kept: each page of a listing reads it again."""
        names = tuple(self.hostile_names.get(repo.repo_id, []))
        key = (repo.repo_id, rev.sha, names, path, recursive)
        with self._lock:
            if key in self._listings:
                return self._listings[key]
        trees: dict[str, hashlib._Hash] = {}  # folder: sha1 over its files, in path order
        for file in sorted(rev.files.values(), key=lambda f: f.path):
            parts = file.path.split("/")
            for i in range(1, len(parts)):
                trees.setdefault("/".join(parts[:i]), hashlib.sha1()).update(
                    f"{file.path}:{file.blob_id}\n".encode()
                )
        listing: _Listing = None
        if not path or path in trees:
            prefix = f"{path}/" if path else ""

            def shown(name: str) -> bool:
                return name.startswith(prefix) and (recursive or "/" not in name[len(prefix) :])

            listing = [
                {"type": "directory", "oid": digest.hexdigest(), "size": 0, "path": name}
                for name, digest in sorted(trees.items())
                if shown(name)
            ]
            for file in sorted(self._listed_files(repo, rev).values(), key=lambda f: f.path):
                hostile = file.path not in rev.files
                if (hostile and path) or (not hostile and not shown(file.path)):
                    continue
                entry: dict[str, Any] = {
                    "type": "file",
                    "oid": file.blob_id,
                    "size": file.size,
                    "path": file.path,
                }
                if file.is_lfs:
                    entry["lfs"] = file.lfs_json()
                listing.append(entry)
        with self._lock:
            self._listings[key] = listing
        return listing

    def _served_bytes(self, file: HubFile) -> bytes:
        size = self.served_size.get(file.path)
        if size is not None:
            return file.content[:size].ljust(size, b"\0")
        if file.path not in self.corrupt or not file.content:
            return file.content
        data = bytearray(file.content)
        data[len(data) // 2] ^= 0xFF
        return bytes(data)

    def _repo_ids(self) -> set[str]:
        with self._lock:
            return set(self._repos)

    def _lookup(self, repo_id: str, revision: str, authorized: bool) -> tuple[_Repo, _Revision]:
        with self._lock:
            repo = self._repos.get(repo_id)
            if repo is None or (repo.private and not authorized):
                status = 401 if repo is not None else 404
                raise _HttpError(status, "Repository not found", "RepoNotFound")
            if revision == "main":
                return repo, repo.revisions[-1]
            for rev in repo.revisions:
                if rev.sha == revision:
                    return repo, rev
        raise _HttpError(404, f"Invalid rev id: {revision}", "RevisionNotFound")

    def _listed_files(self, repo: _Repo, rev: _Revision) -> dict[str, HubFile]:
        files = dict(rev.files)
        for name in self.hostile_names.get(repo.repo_id, []):
            files.setdefault(name, HubFile.make(name, f"hostile file {name}\n".encode(), 1 << 62))
        return files

    def _blob(self, sha256: str, path: str) -> HubFile | None:
        with self._lock:
            file = self._blobs.get(sha256)
        if file is None:
            return None
        return HubFile(path, file.content, True, file.sha256, file.blob_id, file.pointer_size)

    def _model_info(
        self, repo_id: str, revision: str, authorized: bool, blobs: bool
    ) -> dict[str, Any]:
        repo, rev = self._lookup(repo_id, revision, authorized)
        siblings: list[dict[str, Any]] = []
        for file in self._listed_files(repo, rev).values():
            sibling: dict[str, Any] = {"rfilename": file.path}
            if blobs:
                sibling["size"] = file.size
                sibling["blobId"] = file.blob_id
                if file.is_lfs:
                    sibling["lfs"] = {
                        "sha256": file.sha256,
                        "size": file.size,
                        "pointerSize": file.pointer_size,
                    }
            siblings.append(sibling)
        return {
            "_id": _object_id(repo_id),
            "id": repo_id,
            "modelId": repo_id,
            "author": repo_id.split("/")[0] if "/" in repo_id else None,
            "sha": rev.sha,
            "lastModified": rev.last_modified,
            "createdAt": repo.created_at,
            "private": repo.private,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "downloads": repo.downloads,
            "likes": repo.likes,
            "library_name": repo.library_name,
            "tags": list(repo.tags),
            "pipeline_tag": "text-generation",
            "siblings": siblings,
            "spaces": [],
            "usedStorage": sum(f.size for f in rev.files.values()),
            **hub_upload.card_data(dict(rev.files)),
        }

    def _collection_json(self, slug: str) -> dict[str, Any]:
        with self._lock:
            collection = self._collections.get(slug)
            repos = dict(self._repos)
        if collection is None:
            raise _HttpError(404, "Collection not found")
        items: list[dict[str, Any]] = []
        for position, repo_id in enumerate(collection.repo_ids):
            item: dict[str, Any] = {
                "_id": _object_id(f"{slug}/{repo_id}"),
                "id": repo_id,
                "type": "model",
                "repoType": "model",
                "position": position,
                "author": repo_id.split("/")[0],
            }
            repo = repos.get(repo_id)
            if repo is not None:
                item.update(
                    {
                        "downloads": repo.downloads,
                        "likes": repo.likes,
                        "private": repo.private,
                        "gated": "manual" if repo.gated else False,
                        "lastModified": repo.revisions[-1].last_modified,
                        "library_name": repo.library_name,
                        "pipeline_tag": "text-generation",
                    }
                )
            items.append(item)
        owner = slug.split("/")[0]
        return {
            "slug": slug,
            "title": collection.title,
            "description": collection.description,
            "owner": {"name": owner, "fullname": owner, "type": "user"},
            "items": items,
            "lastUpdated": _iso(_EPOCH),
            "position": 0,
            "private": False,
            "theme": "indigo",
            "upvotes": 0,
            "isUpvotedByUser": False,
            "gating": False,
            "shareUrl": f"{self.endpoint}/collections/{slug}",
        }
