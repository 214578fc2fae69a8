"""This computer's settings for a pack stay on this computer: a phone push and a publish
never send `.draftdeck-this-computer.json`, and a Hub update carries it into the new copy
(a repo that ships a file of that name does not replace it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants

from app.core.hub.hub_api import HubConfig
from app.core.hub.job import DONE, DownloadJob
from app.core.hub.publish import publish, publish_plan
from app.core.infra.settings import load_settings
from app.core.phone.adb import Adb
from app.core.phone.push import DONE as PUSHED
from app.core.phone.push import PushJob
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop, update_desktop
from tests.conftest import DRAFT_REPO
from tests.fake_phone import FakePhone
from tests.hub_server import DEFAULT_TOKEN, FakeHub

Copy = Callable[..., Path]
Fixture = Callable[[str], Path]
ROOT = "/data/local/tmp/mnn_models"
HERE = {"thread_num": 1, "memory": "normal", "backend_type": "cpu"}


def _adapted(pack: Path) -> bytes:
    update_desktop(pack, "config_cpu.json", HERE)
    update_desktop(pack, "config.json", {"draft_predict_length": 6})
    return (pack / THIS_COMPUTER_FILE).read_bytes()


def test_a_push_never_sends_this_computer_s_settings(
    tmp_path: Path, phone: FakePhone, bundle_copy: Copy
) -> None:
    pack = bundle_copy("fast-draft", tmp_path / "library" / "fast-draft")
    shipped = (pack / "config_cpu.json").read_bytes()
    _adapted(pack)
    for recipe_only in (False, True):
        job = PushJob(Adb(), phone.address, pack, ROOT, recipe_only=recipe_only)
        job.run()
        status = job.status()
        assert status.state == PUSHED, status.error
        assert THIS_COMPUTER_FILE not in status.pushed + status.verified
    on_phone = phone.local(f"{ROOT}/fast-draft")
    assert not (on_phone / THIS_COMPUTER_FILE).exists()
    assert not any(b'draft_predict_length": 6' in p.read_bytes() for p in on_phone.iterdir())
    # The phone's recipe is the pack's, untouched by what runs here.
    assert (on_phone / "config_cpu.json").read_bytes() == shipped


@pytest.mark.filterwarnings("ignore:Use 'content=<...>' to upload raw bytes:DeprecationWarning")
def test_a_publish_never_sends_this_computer_s_settings(
    hub: FakeHub, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)  # the stand-in has no Xet
    pack = bundle_copy("qwen3-draft-noisy")
    _adapted(pack)
    plan = publish_plan(pack, "maker/adapted-draft-MNN")
    assert THIS_COMPUTER_FILE not in {f.rel for f in plan.files}
    publish(HubConfig(endpoint=hub.endpoint, token=DEFAULT_TOKEN), plan)
    listed = HfApi(endpoint=hub.endpoint).model_info("maker/adapted-draft-MNN").siblings or []
    assert "config_cpu.json" in {s.rfilename for s in listed}
    assert THIS_COMPUTER_FILE not in {s.rfilename for s in listed}


def test_a_hub_update_carries_this_computer_s_settings_over(
    hub: FakeHub, draftdeck_home: Path, fixture_bundle: Fixture
) -> None:
    library = load_settings().library_path()
    config = HubConfig(endpoint=hub.endpoint, token=False)
    pack = Path(DownloadJob(DRAFT_REPO, library, config).run().path)
    mine = _adapted(pack)
    files = {p.name: p.read_bytes() for p in fixture_bundle("qwen3-draft-noisy").iterdir()}
    # A repo shipping a file of that name never replaces this computer's.
    theirs = json.dumps({"version": 1, "config.json": {"thread_num": 64}}).encode()
    hub.add_repo(DRAFT_REPO, {**files, "README.md": b"v2\n", THIS_COMPUTER_FILE: theirs})
    status = DownloadJob(DRAFT_REPO, library, config).run()
    assert status.state == DONE, status.error
    assert (pack / "README.md").read_text() == "v2\n"
    assert (pack / THIS_COMPUTER_FILE).read_bytes() == mine
    assert read_desktop(pack).of("config_cpu.json") == HERE
