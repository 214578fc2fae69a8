"""File → Make Pack… from a Hub repo id, against the local Hub stand-in: the repo's
config.json is fetched alone first; a block it refuses is shown with the block that fits,
as for a folder, and nothing else is downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import constants
from pytestqt.qtbot import QtBot

from app.core.hub.hub_api import HubConfig
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.core.packmaking.export_env import EXPORT_ENV_VAR
from app.ui.packmaking.make_pack_dialog import MakePackDialog
from tests.helpers.export_env import HF_FIXTURES
from tests.hub_server import FakeHub

WAIT_MS = 60_000  # a guard against a hang, not a speed limit
REPO = "someone/llama-tiny"


def test_a_block_the_repos_config_refuses_offers_the_block_that_fits(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv(EXPORT_ENV_VAR, str(tmp_path / "no-env-yet"))
    out = tmp_path / "pack"
    with FakeHub() as hub:
        hub.add_folder(REPO, HF_FIXTURES / "llama-tiny")
        hub_config = HubConfig(endpoint=hub.endpoint, token=False)
        dialog = MakePackDialog(Library(load_settings(), save_settings), hub_config)
        qtbot.addWidget(dialog)
        dialog.show()
        form = dialog.form
        form.source_edit.setText(REPO)
        form.out_edit.setText(str(out))
        assert "config.json first" in form.check_label.text()
        assert dialog.start_button.isEnabled()  # a repo is checked once Make Pack starts
        dialog.start_button.click()
        qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
        asked = [path for _, path, _ in hub.requests if not path.startswith("/api/")]
    said = form.check_label.text()
    assert "quant_block 128 does not divide the hidden size 64" in said, dialog.status.text()
    assert form.check_label.objectName() == "warning"
    assert form.adjust_button.isVisible() and form.adjust_button.text() == "Use Block 64"
    assert not dialog.start_button.isEnabled()
    assert "Not started" in dialog.status.text()
    assert asked and all(path.endswith("/config.json") for path in asked), asked
    form.adjust_button.click()
    assert form.settings().block == 64
    assert dialog.start_button.isEnabled()
    assert not out.exists()
