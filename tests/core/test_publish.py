"""Publishing a pack to the local Hub stand-in with the real huggingface_hub client, and
getting it back with DraftDeck's own Downloads.

The client runs its classic LFS upload (HF_HUB_DISABLE_XET): the stand-in has no Xet
store (tests/hub_upload.py)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants

from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HubConfig
from app.core.hub.job import DONE
from app.core.hub.publish import UploadProgress, publish, publish_plan
from app.core.infra.errors import HubError, UnreadableFileError
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.card import CARD, TAGS, CardFacts
from app.core.packmaking.make import write_card_only
from app.core.packmaking.verify_compare import TextAgreement
from app.core.packmaking.verify_result import save_check
from tests import hub_upload
from tests.helpers.cli import APP, run_cli
from tests.helpers.downloads import finish, wait_for
from tests.helpers.export_checks import check_of
from tests.hub_server import DEFAULT_TOKEN, FakeHub

Copy = Callable[..., Path]
REPO = "maker/Qwen3-tiny-draft-MNN"
# huggingface_hub 2.4's classic LFS PUT passes the file as httpx's `data=`, which httpx
# deprecates: the client's warning, not DraftDeck's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Use 'content=<...>' to upload raw bytes:DeprecationWarning"
)


@pytest.fixture(autouse=True)
def classic_lfs_upload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pack_with_our_files(bundle_copy: Copy) -> Path:
    """A draft pack holding every kind of file DraftDeck keeps in a pack folder."""
    pack = bundle_copy("qwen3-draft-noisy")
    (pack / ".draftdeck-source.json").write_text('{"repo": "someone/else"}')
    # What measure-pack measured here: this computer's settings for the pack.
    (pack / ".draftdeck-this-computer.json").write_text(
        '{"version": 1, "config_cpu.json": {"thread_num": 1, "memory": "normal"}}'
    )
    (pack / ".draftdeck-original").mkdir()
    (pack / ".draftdeck-original" / "config_cpu.json").write_text("{}")
    (pack / "config_cpu.json.bak").write_text("{}")
    (pack / "config.json.before-update").write_text("{}")
    (pack / ".cache" / "huggingface" / "download").mkdir(parents=True)
    (pack / ".cache" / "huggingface" / "download" / "llm.mnn.lock").write_text("")
    write_card_only(pack, CardFacts(license="apache-2.0"), force=False)
    return pack


def test_a_published_pack_downloads_back_byte_for_byte(
    hub: FakeHub, downloads: Downloads, bundle_copy: Copy
) -> None:
    pack = _pack_with_our_files(bundle_copy)
    plan = publish_plan(pack, REPO)
    published = publish(HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN), plan)
    assert published.commit == hub.sha(REPO)
    names = {f.rel for f in plan.files}
    assert CARD in names and "runtime_config.json" in names
    # DraftDeck's own files are never uploaded: only the pack and the Hub's .gitattributes.
    listed = {s.rfilename for s in HfApi(endpoint=hub.endpoint).model_info(REPO).siblings or []}
    assert listed == names | {".gitattributes"}
    assert not any(
        n.startswith(".draftdeck") or n.endswith((".bak", ".before-update")) for n in listed
    )
    assert hub.file(REPO, "llm.mnn.weight").is_lfs  # went through the LFS batch and PUT
    job = downloads.start(REPO)
    assert finish(downloads, job) == DONE, job.status().error
    got = Path(job.status().path)
    for name in names:
        assert _sha256(got / name) == _sha256(pack / name), name


def test_the_card_header_is_the_hubs_model_card_data(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = _pack_with_our_files(bundle_copy)
    publish(HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN), publish_plan(pack, REPO))
    card = HfApi(endpoint=hub.endpoint).model_info(REPO).card_data
    assert card is not None
    assert card.license == "apache-2.0" and set(TAGS) <= set(card.tags or [])
    assert card.get("library_name") == "mnn"
    text = (pack / CARD).read_text()
    assert "Not run: this export was not compared with its source model" in text
    assert "| Target | Enabled |" in text  # the pack's runtime_config.json, tabled


def test_private_publish_needs_the_token_to_be_seen(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    config = HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN)
    publish(config, publish_plan(pack, REPO), private=True)
    assert HfApi(endpoint=hub.endpoint, token=DEFAULT_TOKEN).model_info(REPO).private
    with pytest.raises(Exception, match=r"Repository Not Found|401"):
        HfApi(endpoint=hub.endpoint, token=False).model_info(REPO)
    with pytest.raises(HubError, match="needs a Hugging Face token"):
        publish(HubConfig(endpoint=hub.endpoint, token=False), publish_plan(pack, REPO))


def test_a_wrong_token_is_said_and_nothing_is_made(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    with pytest.raises(HubError, match="Publishing to maker/Qwen3-tiny-draft-MNN"):
        publish(HubConfig(endpoint=hub.endpoint, token="hf_wrong"), publish_plan(pack, REPO))
    assert REPO not in hub._repo_ids()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_stops_the_upload_before_its_commit(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    upload = hub_upload.state(hub)
    upload.hold = threading.Event()  # every PUT waits: the upload is caught in the middle
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": DEFAULT_TOKEN,
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    # Files the hub does not hold yet (the hub fixture serves qwen3-draft-noisy's).
    with subprocess.Popen(
        [*APP, "publish", str(pack), REPO],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as proc:
        try:
            wait_for(lambda: upload.puts_started > 0)
            proc.send_signal(signal.SIGINT)
            assert proc.stderr is not None
            heard = ""
            while "cancelling" not in heard:
                line = proc.stderr.readline()
                assert line, f"publish ended without cancelling: {heard}"
                heard += line
            upload.hold.set()  # the parts under way may finish: no commit may follow them
            rest = proc.stderr.read()
            proc.wait(timeout=60)
        finally:
            upload.hold.set()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, heard + rest
    assert "publishing cancelled" in rest and "keeps its last complete commit" in rest
    assert upload.commits == []
    assert {".gitattributes"} == set(hub._listed_files(*hub._lookup(REPO, "main", True)))


def test_publish_cli_prints_what_it_uploads(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": DEFAULT_TOKEN,
        "HF_HUB_DISABLE_XET": "1",
    }
    proc = subprocess.run(
        [*APP, "publish", str(pack), REPO, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "uploading 7 files" in proc.stderr and "no README.md" in proc.stderr
    assert f'"commit": "{hub.sha(REPO)}"' in proc.stdout


def test_publish_cli_uses_the_token_saved_in_settings(
    hub: FakeHub, bundle_copy: Copy, tmp_path: Path
) -> None:
    """As downloads do: the saved token first, with no HF_TOKEN and no Hub login."""
    save_settings(replace(load_settings(), hub_token=DEFAULT_TOKEN))
    pack = bundle_copy("qwen3-draft-noisy")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")}
    env |= {"HF_ENDPOINT": hub.endpoint, "HF_HOME": str(tmp_path / "hf-home")}
    env["HF_HUB_DISABLE_XET"] = "1"
    proc = subprocess.run(
        [*APP, "publish", str(pack), REPO], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert f"(commit {hub.sha(REPO)[:12]})" in proc.stdout


def test_progress_lines_read_back_and_nothing_else_reads_as_one() -> None:
    progress = UploadProgress(2, 7, 1024, 4096, "llm.mnn.weight")
    assert UploadProgress.from_json(json.loads(json.dumps(progress.to_json()))) == progress
    assert progress.words() == "2 of 7 files sent (1.0 KB of 4.0 KB); sending llm.mnn.weight…"
    assert "making the commit" in UploadProgress(7, 7, 4096, 4096).words()
    fields = progress.to_json()["progress"]
    others: list[object] = [
        None,
        [],
        {"repo": REPO, "commit": "abc", "url": "u"},
        {"progress": "2 of 7"},
        {"progress": {**fields, "extra": 1}},
        {"progress": {**fields, "files_done": "2"}},
        {"progress": {**fields, "current": None}},
    ]
    for other in others:
        assert UploadProgress.from_json(other) is None, other


SECRET = b"hf_not_for_strangers_0123456789"


def _everything_the_hub_holds(hub: FakeHub) -> list[bytes]:
    """Every file of every revision and every upload not committed yet."""
    revisions = [rev for repo in hub._repos.values() for rev in repo.revisions]
    held = [f.content for rev in revisions for f in rev.files.values()]
    return held + list(hub_upload.state(hub).pending.values())


def _token_outside(tmp_path: Path) -> Path:
    """A user's Hub token, where a Hub home keeps it: outside any pack."""
    token = tmp_path / "hf-home" / "token"
    token.parent.mkdir()
    token.write_bytes(SECRET)
    return token


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_a_link_out_of_the_pack_refuses_the_publish_and_the_token_never_goes_up(
    hub: FakeHub, bundle_copy: Copy, tmp_path: Path
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    token = _token_outside(tmp_path)
    (pack / "LICENSE.txt").symlink_to(os.path.relpath(token, pack))
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": DEFAULT_TOKEN,
        "HF_HUB_DISABLE_XET": "1",
    }
    done = run_cli("publish", str(pack), REPO, env=env, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"LICENSE.txt is a symbolic link to {token}, outside the pack" in done.stderr
    assert "Traceback" not in done.stderr
    assert not [r for r in hub.requests if r[0] in ("POST", "PUT")]  # nothing was sent
    assert not any(SECRET in content for content in _everything_the_hub_holds(hub))


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_a_link_to_a_file_of_the_pack_goes_up_as_that_file(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    (pack / "LICENSE").write_text("Apache-2.0\n")
    (pack / "LICENSE.txt").symlink_to("LICENSE")
    publish(HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN), publish_plan(pack, REPO))
    assert hub.file(REPO, "LICENSE.txt").content == b"Apache-2.0\n"
    assert hub.file(REPO, "LICENSE").content == b"Apache-2.0\n"


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_a_file_that_becomes_a_link_after_the_plan_is_not_uploaded(
    hub: FakeHub, bundle_copy: Copy, tmp_path: Path
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    (pack / "LICENSE.txt").write_text("MIT\n")
    plan = publish_plan(pack, REPO)
    (pack / "LICENSE.txt").unlink()
    (pack / "LICENSE.txt").symlink_to(_token_outside(tmp_path))
    with pytest.raises(UnreadableFileError, match=r"LICENSE\.txt: .*symbolic link"):
        publish(HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN), plan)
    assert hub_upload.state(hub).commits == []
    assert not any(SECRET in content for content in _everything_the_hub_holds(hub))


def test_the_export_check_goes_up_without_this_computers_folders(
    hub: FakeHub, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    text = TextAgreement("prose", 500, 0, 1.0, 0.9, 0.0, 10.0, 0, None)
    source = Path("/home/someone/models/Qwen3-0.6B")
    save_check(pack, replace(check_of((text,)), pack=str(pack), source=str(source)))
    publish(HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN), publish_plan(pack, REPO))
    sent = hub.file(REPO, EXPORT_CHECK).content
    assert b"/home/someone" not in sent and str(pack.parent).encode() not in sent
    local = json.loads((pack / EXPORT_CHECK).read_text())
    assert json.loads(sent) == {**local, "pack": pack.name, "source": "Qwen3-0.6B"}


def test_an_unreadable_export_check_is_not_uploaded(hub: FakeHub, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    (pack / EXPORT_CHECK).write_text(f'{{"pack": "{pack}", ')
    plan = publish_plan(pack, REPO)
    assert plan.export_check is not None and EXPORT_CHECK not in {f.rel for f in plan.files}
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": DEFAULT_TOKEN,
        "HF_HUB_DISABLE_XET": "1",
    }
    done = run_cli("publish", str(pack), REPO, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "note: Export check unreadable" in done.stderr and "it is not uploaded" in done.stderr
    listed = {s.rfilename for s in HfApi(endpoint=hub.endpoint).model_info(REPO).siblings or []}
    assert EXPORT_CHECK not in listed and "config.json" in listed
