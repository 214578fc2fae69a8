"""The fake Hub (tests/hub_server.py) against the real huggingface_hub client."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import (
    HfApi,
    constants,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
    snapshot_download,
)
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile, RepoFolder

from tests.helpers.paths import FIXTURES
from tests.hub_server import TREE_PAGE_EXPANDED, FakeHub, git_blob_sha1

REPO = "draftdeck/tiny"
SMALL = b'{"hello": "world"}\n'
BIG = bytes(range(256)) * 40  # 10240 bytes: above the LFS threshold
NESTED = b"nested file\n"
FILES = {"config.json": SMALL, "llm.mnn.weight": BIG, "sub/dir/notes.txt": NESTED}


@pytest.fixture(autouse=True)
def hf_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private HF_HOME, no token, online, no telemetry (constants are read at import)."""
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)


@pytest.fixture(autouse=True)
def no_fakehub_threads() -> Iterator[None]:
    """conftest only checks non-daemon threads; FakeHub's are daemons, so check them here."""
    yield
    assert [t for t in threading.enumerate() if t.name.startswith("FakeHub")] == []


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.add_repo(REPO, FILES)
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_servers_stop_even_with_keep_alive_connections_open() -> None:
    before = set(threading.enumerate())
    with httpx2.Client() as client:
        with FakeHub() as server:
            server.add_repo(REPO, FILES)
            assert server.endpoint.startswith("http://127.0.0.1:")
            assert server.cdn_endpoint != server.endpoint
            url = f"{server.endpoint}/{REPO}/resolve/main/llm.mnn.weight"
            assert client.get(url, follow_redirects=True).content == BIG  # both origins pooled
            assert len(set(threading.enumerate()) - before) >= 4  # 2 servers + 2 handlers
        assert set(threading.enumerate()) - before == set()
    with pytest.raises(RuntimeError):
        _ = server.endpoint


def test_model_info_with_files_metadata(hub: FakeHub) -> None:
    info = HfApi(endpoint=hub.endpoint, token=False).model_info(REPO, files_metadata=True)
    assert info.id == REPO
    assert info.sha == hub.sha(REPO)
    assert info.private is False
    assert info.last_modified is not None
    assert info.siblings is not None
    siblings = {s.rfilename: s for s in info.siblings}
    assert set(siblings) == set(FILES)
    small, big = siblings["config.json"], siblings["llm.mnn.weight"]
    assert (small.size, small.blob_id, small.lfs) == (len(SMALL), git_blob_sha1(SMALL), None)
    assert big.size == len(BIG)
    assert big.lfs is not None
    assert big.lfs.sha256 == hashlib.sha256(BIG).hexdigest()
    assert big.lfs.size == len(BIG)
    assert big.blob_id == hub.file(REPO, "llm.mnn.weight").blob_id != git_blob_sha1(BIG)


def test_model_info_by_revision_and_updates(hub: FakeHub) -> None:
    api = HfApi(endpoint=hub.endpoint, token=False)
    old = hub.sha(REPO)
    new = hub.add_repo(REPO, {**FILES, "config.json": b"{}"})
    assert new != old
    assert api.model_info(REPO).sha == new
    assert api.model_info(REPO, revision=old).sha == old
    assert api.model_info(REPO, revision="main").sha == new
    plain = api.model_info(REPO)
    assert plain.siblings is not None
    assert plain.siblings[0].size is None  # sizes only with files_metadata
    with pytest.raises(RevisionNotFoundError):
        api.model_info(REPO, revision="f" * 40)


def test_model_info_with_expand_has_only_what_was_asked(hub: FakeHub) -> None:
    info = HfApi(endpoint=hub.endpoint, token=False).model_info(REPO, expand=["sha"])
    assert info.sha == hub.sha(REPO)
    assert info.siblings is None and info.tags is None


def test_an_expanded_tree_listing_comes_in_smaller_pages(hub: FakeHub) -> None:
    files = {f"d{i % 3}/f{i:03d}": b"%d" % i for i in range(2 * TREE_PAGE_EXPANDED + 7)}
    hub.add_repo("draftdeck/many", files)
    hub.reset_counters()
    api = HfApi(endpoint=hub.endpoint, token=False)
    listed = [e.path for e in api.list_repo_tree("draftdeck/many", recursive=True, expand=True)]
    assert sorted(p for p in listed if "/" in p) == sorted(files)  # each once
    assert sorted(p for p in listed if "/" not in p) == ["d0", "d1", "d2"]
    assert len(hub.requests) == 3


def test_list_repo_tree(hub: FakeHub) -> None:
    api = HfApi(endpoint=hub.endpoint, token=False)
    everything = list(api.list_repo_tree(REPO, recursive=True))
    files = {e.path: e for e in everything if isinstance(e, RepoFile)}
    folders = {e.path for e in everything if isinstance(e, RepoFolder)}
    assert set(files) == set(FILES)
    assert folders == {"sub", "sub/dir"}
    big = files["llm.mnn.weight"]
    assert big.size == len(BIG)
    assert big.lfs is not None and big.lfs.sha256 == hashlib.sha256(BIG).hexdigest()
    assert files["config.json"].blob_id == git_blob_sha1(SMALL)
    top = {e.path for e in api.list_repo_tree(REPO)}
    assert top == {"config.json", "llm.mnn.weight", "sub"}
    inner = {e.path for e in api.list_repo_tree(REPO, path_in_repo="sub/dir")}
    assert inner == {"sub/dir/notes.txt"}
    with pytest.raises(RemoteEntryNotFoundError):
        list(api.list_repo_tree(REPO, path_in_repo="nope"))


def test_download_small_and_lfs_file(hub: FakeHub, cache: Path) -> None:
    small = hf_hub_download(
        REPO, "config.json", endpoint=hub.endpoint, cache_dir=cache, token=False
    )
    assert Path(small).read_bytes() == SMALL
    big = hf_hub_download(
        REPO, "llm.mnn.weight", endpoint=hub.endpoint, cache_dir=cache, token=False
    )
    assert Path(big).read_bytes() == BIG
    nested = hf_hub_download(
        REPO, "sub/dir/notes.txt", endpoint=hub.endpoint, cache_dir=cache, token=False
    )
    assert Path(nested).read_bytes() == NESTED
    # The big file went through the 302 to the cdn origin.
    cdn_gets = [p for m, p, _ in hub.requests if m == "GET" and p.startswith("/lfs/")]
    assert len(cdn_gets) == 1
    assert hub.bytes_served == {
        "config.json": len(SMALL),
        "llm.mnn.weight": len(BIG),
        **{"sub/dir/notes.txt": len(NESTED)},
    }


def test_file_metadata_of_lfs_file_comes_from_the_redirect(hub: FakeHub) -> None:
    url = hf_hub_url(REPO, "llm.mnn.weight", endpoint=hub.endpoint)
    meta = get_hf_file_metadata(url, token=False)
    assert meta.commit_hash == hub.sha(REPO)
    assert meta.etag == hashlib.sha256(BIG).hexdigest()
    assert meta.size == len(BIG)
    assert meta.location.startswith(hub.cdn_endpoint + "/lfs/")
    small = get_hf_file_metadata(hf_hub_url(REPO, "config.json", endpoint=hub.endpoint))
    assert (small.etag, small.size) == (git_blob_sha1(SMALL), len(SMALL))
    assert small.location == hf_hub_url(REPO, "config.json", endpoint=hub.endpoint)


def test_snapshot_download_of_a_fixture_bundle(hub: FakeHub, tmp_path: Path) -> None:
    folder = FIXTURES / "qwen3-draft-noisy"
    sha = hub.add_folder("draftdeck/qwen3-draft-noisy", folder)
    target = tmp_path / "download"
    result = snapshot_download(
        "draftdeck/qwen3-draft-noisy",
        endpoint=hub.endpoint,
        cache_dir=tmp_path / "cache",
        local_dir=target,
        token=False,
    )
    assert Path(result) == target.resolve()
    wanted = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")}
    got = {
        p.relative_to(target).as_posix(): p.read_bytes()
        for p in target.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(target).parts
    }
    assert got == wanted
    cached = snapshot_download(
        "draftdeck/qwen3-draft-noisy", endpoint=hub.endpoint, cache_dir=tmp_path / "c2", token=False
    )
    assert Path(cached).name == sha


def test_get_collection(hub: FakeHub) -> None:
    slug = "draftdeck/drafts-0123456789abcdef01234567"
    hub.add_collection(slug, "Drafts", [REPO, "draftdeck/other"])
    collection = HfApi(endpoint=hub.endpoint, token=False).get_collection(slug)
    assert collection.slug == slug
    assert collection.title == "Drafts"
    assert [(i.item_id, i.item_type) for i in collection.items] == [
        (REPO, "model"),
        ("draftdeck/other", "model"),
    ]
    with pytest.raises(HfHubHTTPError) as missing:
        HfApi(endpoint=hub.endpoint, token=False).get_collection("draftdeck/none-0")
    assert missing.value.response.status_code == 404


def test_unknown_repo_and_file(hub: FakeHub, cache: Path) -> None:
    api = HfApi(endpoint=hub.endpoint, token=False)
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("draftdeck/missing")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download(
            "draftdeck/missing", "config.json", endpoint=hub.endpoint, cache_dir=cache, token=False
        )
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(REPO, "missing.bin", endpoint=hub.endpoint, cache_dir=cache, token=False)


def test_private_repo_needs_the_token(hub: FakeHub, cache: Path) -> None:
    hub.add_repo("draftdeck/secret", {"config.json": SMALL}, private=True)
    with pytest.raises(RepositoryNotFoundError) as error:
        HfApi(endpoint=hub.endpoint, token=False).model_info("draftdeck/secret")
    assert error.value.response.status_code == 401
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.endpoint, token="hf_wrong").model_info("draftdeck/secret")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download(
            "draftdeck/secret", "config.json", endpoint=hub.endpoint, cache_dir=cache, token=False
        )
    info = HfApi(endpoint=hub.endpoint, token=hub.token).model_info("draftdeck/secret")
    assert info.private is True
    path = hf_hub_download(
        "draftdeck/secret", "config.json", endpoint=hub.endpoint, cache_dir=cache, token=hub.token
    )
    assert Path(path).read_bytes() == SMALL


def test_gated_repo_lists_but_does_not_serve_without_token(hub: FakeHub, cache: Path) -> None:
    hub.add_repo("draftdeck/gated", {"config.json": SMALL}, gated=True)
    assert HfApi(endpoint=hub.endpoint, token=False).model_info("draftdeck/gated").gated
    with pytest.raises(GatedRepoError):
        hf_hub_download(
            "draftdeck/gated", "config.json", endpoint=hub.endpoint, cache_dir=cache, token=False
        )
    path = hf_hub_download(
        "draftdeck/gated", "config.json", endpoint=hub.endpoint, cache_dir=cache, token=hub.token
    )
    assert Path(path).read_bytes() == SMALL


def test_range_requests_on_both_origins(hub: FakeHub) -> None:
    sha = hub.sha(REPO)
    with httpx2.Client() as client:
        small = client.get(
            f"{hub.endpoint}/{REPO}/resolve/{sha}/config.json", headers={"Range": "bytes=2-6"}
        )
        assert small.status_code == 206
        assert small.content == SMALL[2:7]
        assert small.headers["Content-Range"] == f"bytes 2-6/{len(SMALL)}"
        assert small.headers["X-Repo-Commit"] == sha
        assert small.headers["ETag"] == f'"{git_blob_sha1(SMALL)}"'

        url = f"{hub.endpoint}/{REPO}/resolve/main/llm.mnn.weight"
        redirect = client.head(url)
        assert redirect.status_code == 302
        assert redirect.headers["X-Linked-Size"] == str(len(BIG))
        assert redirect.headers["X-Linked-Etag"] == f'"{hashlib.sha256(BIG).hexdigest()}"'
        assert redirect.headers["X-Repo-Commit"] == sha
        assert redirect.headers["Location"].startswith(hub.cdn_endpoint)

        tail = client.get(url, headers={"Range": "bytes=10000-"}, follow_redirects=True)
        assert tail.status_code == 206
        assert tail.content == BIG[10000:]
        assert tail.headers["Content-Range"] == f"bytes 10000-{len(BIG) - 1}/{len(BIG)}"
        assert (
            client.get(url, headers={"Range": "bytes=99999-"}, follow_redirects=True).status_code
            == 416
        )
    assert ("GET", f"/{REPO}/resolve/{sha}/config.json", "bytes=2-6") in hub.requests


def test_drop_after_bytes_fails_once_then_retry_succeeds(hub: FakeHub) -> None:
    url = f"{hub.endpoint}/{REPO}/resolve/main/llm.mnn.weight"
    hub.drop_after_bytes["llm.mnn.weight"] = 3000
    with httpx2.Client(follow_redirects=True) as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            client.get(url)
        assert "llm.mnn.weight" not in hub.drop_after_bytes
        assert hub.bytes_served["llm.mnn.weight"] == 3000
        resumed = client.get(url, headers={"Range": "bytes=3000-"})
        assert resumed.content == BIG[3000:]
        assert client.get(url).content == BIG
    # Also on the direct (non-LFS) path.
    hub.drop_after_bytes["config.json"] = 5
    with httpx2.Client() as client:
        small = f"{hub.endpoint}/{REPO}/resolve/main/config.json"
        with pytest.raises(httpx2.RemoteProtocolError):
            client.get(small)
        assert client.get(small).content == SMALL


@pytest.mark.parametrize(("chunk_size", "second_range"), [(None, None), (1000, "bytes=4000-")])
def test_hf_hub_download_retries_after_a_drop(
    hub: FakeHub,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    chunk_size: int | None,
    second_range: str | None,
) -> None:
    """http_get retries within one call, resuming only from the last whole chunk it got
    (constants.DOWNLOAD_CHUNK_SIZE, 10 MiB by default: a small file restarts from 0)."""
    # http_get sleeps 1 s before retrying.
    monkeypatch.setattr("huggingface_hub.file_download.time.sleep", lambda _s: None)
    if chunk_size is not None:
        monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", chunk_size)
    hub.drop_after_bytes["llm.mnn.weight"] = 4096
    path = hf_hub_download(
        REPO, "llm.mnn.weight", endpoint=hub.endpoint, cache_dir=cache, token=False
    )
    assert Path(path).read_bytes() == BIG
    cdn = [(m, r) for m, p, r in hub.requests if p.startswith("/lfs/")]
    assert cdn == [("GET", None), ("GET", second_range)]


def test_corrupt_flips_one_byte(hub: FakeHub, cache: Path) -> None:
    hub.corrupt.add("llm.mnn.weight")
    path = hf_hub_download(
        REPO, "llm.mnn.weight", endpoint=hub.endpoint, cache_dir=cache, token=False
    )
    data = Path(path).read_bytes()
    assert len(data) == len(BIG)
    assert sum(a != b for a, b in zip(data, BIG, strict=True)) == 1


def test_hostile_names_are_listed_and_served(hub: FakeHub, cache: Path) -> None:
    names = ["../evil.txt", "/etc/passwd", "a/../../b"]
    hub.hostile_names[REPO] = names
    api = HfApi(endpoint=hub.endpoint, token=False)
    listed = {e.path for e in api.list_repo_tree(REPO, recursive=True)}
    assert set(names) <= listed
    siblings = api.model_info(REPO).siblings
    assert siblings is not None
    assert set(names) <= {s.rfilename for s in siblings}
    with httpx2.Client() as client:
        raw = f"{hub.endpoint}/{REPO}/resolve/main/%2Fetc%2Fpasswd"
        assert client.get(raw).content == b"hostile file /etc/passwd\n"
    # The real client refuses such names (ValueError), also inside snapshot_download.
    with pytest.raises(ValueError):
        hf_hub_download(REPO, "../evil.txt", endpoint=hub.endpoint, cache_dir=cache, token=False)
    with pytest.raises(ValueError):
        snapshot_download(REPO, endpoint=hub.endpoint, cache_dir=cache, token=False)


def test_throttle_caps_throughput(hub: FakeHub) -> None:
    hub.throttle_bytes_per_s = 40_000
    url = f"{hub.endpoint}/{REPO}/resolve/main/llm.mnn.weight"
    start = time.monotonic()
    with httpx2.Client(follow_redirects=True) as client:
        assert client.get(url).content == BIG
    assert time.monotonic() - start >= 0.2  # 10 KiB at 40 kB/s takes ~0.25 s


def test_endpoint_through_patched_constants(
    hub: FakeHub, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without endpoint=: HF_ENDPOINT is read at import, so patch the derived constants."""
    monkeypatch.setattr(constants, "ENDPOINT", hub.endpoint)
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        hub.endpoint + "/{repo_id}/resolve/{revision}/{filename}",
    )
    assert HfApi(token=False).model_info(REPO).sha == hub.sha(REPO)
    path = hf_hub_download(REPO, "config.json", cache_dir=cache, token=False)
    assert Path(path).read_bytes() == SMALL
