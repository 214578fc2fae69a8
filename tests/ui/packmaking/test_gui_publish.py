"""File → Publish to Hugging Face…, offscreen: the dialog publishes a pack to the local Hub
stand-in through `draftdeck publish` in a child process, the files come back equal with
DraftDeck's own Downloads, the bar counts the files and bytes sent, a pack whose export
was not verified is published only when the user says so, and Cancel stops an upload
before its commit.

The child runs the Hub client's classic LFS upload (HF_HUB_DISABLE_XET): the stand-in
has no Xet store (tests/hub_upload.py)."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from huggingface_hub import constants
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.hub.downloads import Downloads
from app.core.hub.job import DONE
from app.core.hub.publish import SMALL_FILE, publish_plan
from app.core.infra.settings import load_settings
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.card import CARD, CardFacts
from app.core.packmaking.make import write_card_only
from app.ui.packmaking.job_dialog import BAR_STEPS
from app.ui.packmaking.publish_dialog import NEVER_CHECKED, NO_CARD, PublishDialog
from tests import hub_upload
from tests.helpers.downloads import finish
from tests.helpers.export_checks import record_check
from tests.hub_server import DEFAULT_TOKEN, FakeHub

Copy = Callable[..., Path]
REPO = "maker/Qwen3-tiny-draft-MNN"
WAIT_MS = 120_000  # a child process on a loaded machine: a guard against a hang only


@pytest.fixture
def hub_env(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    """The child publishes to the stand-in with its token, on the classic LFS path."""
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.setenv("HF_TOKEN", DEFAULT_TOKEN)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    return hub


def _dialog(qtbot: QtBot, pack: Path | None, repo: str = "") -> PublishDialog:
    dialog = PublishDialog(load_settings(), pack)
    qtbot.addWidget(dialog)
    dialog.show()
    if repo:
        QTest.keyClicks(dialog.repo_edit, repo)
    return dialog


def _texts(dialog: PublishDialog) -> str:
    return "\n".join(label.text() for label in dialog.findChildren(QLabel))


def _question(dialog: PublishDialog) -> QMessageBox:
    boxes = [
        box
        for box in dialog.findChildren(QMessageBox, "confirmDialog")
        if box.isVisible()  # not one closed a moment ago and not yet deleted
    ]
    assert len(boxes) == 1, [box.text() for box in boxes]
    return boxes[0]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_dialog_publishes_a_pack_that_downloads_back_equal(
    qtbot: QtBot, hub_env: FakeHub, downloads: Downloads, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-independent")  # files the stand-in does not hold yet
    write_card_only(pack, CardFacts(license="apache-2.0"), force=False)
    dialog = _dialog(qtbot, pack, REPO)
    qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
    assert dialog.card_view.toPlainText() == (pack / CARD).read_text()
    assert f"go to {REPO} on" in dialog.summary.text()
    texts = _texts(dialog)
    assert "HF_TOKEN (environment variable)" in texts and DEFAULT_TOKEN not in texts
    # Never checked: a note, not a question.
    assert dialog.check_label.text() == NEVER_CHECKED
    assert dialog.check_label.objectName() != "warning"
    QTest.keyClick(dialog.repo_edit, Qt.Key.Key_Return)  # Return starts
    assert dialog.running() and dialog.close_button.text() == "Cancel"
    assert not dialog.findChildren(QMessageBox)
    qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
    assert dialog.status.text().startswith("Published"), dialog.status.text()
    assert hub_env.sha(REPO)[:12] in dialog.status.text()
    job = downloads.start(REPO)
    assert finish(downloads, job) == DONE, job.status().error
    got = Path(job.status().path)
    uploaded = {p.name for p in pack.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert CARD in uploaded and "llm.mnn.weight" in uploaded
    for name in uploaded:
        assert _sha256(got / name) == _sha256(pack / name), name


def test_the_bar_counts_the_files_and_bytes_sent(
    qtbot: QtBot, hub_env: FakeHub, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    (pack / "weights-2.bin").write_bytes(os.urandom(SMALL_FILE))  # large: sent on its own
    record_check(pack, faithful=1.0, cost=0.9)  # verified: published without a question
    plan = publish_plan(pack, REPO)
    # As on the Hub (10 MB), only the large file takes the LFS path: the PUTs wait, so
    # the upload stops at it, the small files sent (together, in one request).
    monkeypatch.setattr(hub_upload, "LFS_THRESHOLD", SMALL_FILE - 1)
    small = [f for f in plan.files if f.size < SMALL_FILE]
    held, sent = len(small), sum(f.size for f in small)
    upload = hub_upload.state(hub_env)
    upload.hold = threading.Event()
    try:
        dialog = _dialog(qtbot, pack, REPO)
        qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
        assert dialog.check_label.text().startswith("Export verified (faithful 1.000 top-1")
        dialog.start_button.click()
        assert dialog.running() and not dialog.findChildren(QMessageBox)
        assert dialog.bar.maximum() == 0  # busy until the child counts
        now = "sending weights-2.bin…"
        qtbot.waitUntil(
            lambda: upload.puts_started > 0 and now in dialog.status.text(), timeout=WAIT_MS
        )
        assert f"{held} of {len(plan.files)} files sent" in dialog.status.text()
        assert dialog.bar.maximum() == BAR_STEPS
        assert dialog.bar.value() == BAR_STEPS * sent // plan.total_bytes
    finally:
        upload.hold.set()
    qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
    assert dialog.status.text().startswith("Published"), dialog.status.text()
    assert dialog.bar.isHidden()
    assert len(upload.commits) == 1


def test_a_pack_not_verified_is_published_only_when_the_user_says_so(
    qtbot: QtBot, hub_env: FakeHub, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    record_check(pack, faithful=0.6, cost=0.5)
    dialog = _dialog(qtbot, pack, REPO)
    qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
    said = dialog.check_label.text()
    assert said.startswith("Export not verified: Top-1 agreement with the quantized source is")
    assert dialog.check_label.objectName() == "warning"
    dialog.start_button.click()
    box = _question(dialog)
    assert "prose: first differs after token 3" in box.text() and REPO in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    QTest.keyClick(box, Qt.Key.Key_Return)  # the default: not published
    assert not dialog.running() and REPO not in hub_env._repo_ids()

    dialog.start_button.click()
    next(b for b in _question(dialog).buttons() if b.text() == "Publish Anyway").click()
    assert dialog.running()
    qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
    assert dialog.status.text().startswith("Published"), dialog.status.text()
    assert hub_env.file(REPO, EXPORT_CHECK).content == (pack / EXPORT_CHECK).read_bytes()


def test_cancel_stops_the_upload_before_its_commit(
    qtbot: QtBot, hub_env: FakeHub, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-independent")
    upload = hub_upload.state(hub_env)
    upload.hold = threading.Event()  # every PUT waits: the upload is caught in the middle
    try:
        dialog = _dialog(qtbot, pack, REPO)
        qtbot.waitUntil(dialog.start_button.isEnabled, timeout=WAIT_MS)
        dialog.start_button.click()
        qtbot.waitUntil(lambda: upload.puts_started > 0, timeout=WAIT_MS)
        QTest.keyClick(dialog, Qt.Key.Key_Escape)  # Esc cancels a running upload…
        qtbot.waitUntil(lambda: not dialog.running(), timeout=WAIT_MS)
        assert dialog.isVisible()  # …and does not close the dialog
        assert "Cancelled: " + REPO + " keeps its last complete commit" in dialog.status.text()
    finally:
        upload.hold.set()
    assert upload.commits == []
    QTest.keyClick(dialog, Qt.Key.Key_Escape)  # idle: Esc closes
    assert not dialog.isVisible()


@pytest.fixture
def no_token_anywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-login" / "token"))
    yield


def test_without_a_token_publish_is_not_offered(
    qtbot: QtBot, no_token_anywhere: None, bundle_copy: Copy
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    dialog = _dialog(qtbot, pack, REPO)
    qtbot.waitUntil(lambda: "go to" in dialog.summary.text(), timeout=WAIT_MS)
    assert not dialog.start_button.isEnabled()
    assert "none found: set HF_TOKEN" in _texts(dialog)
    assert dialog.card_view.toPlainText() == NO_CARD  # this fixture has no README.md


def test_a_saved_token_is_named_never_shown(
    qtbot: QtBot, no_token_anywhere: None, bundle_copy: Copy
) -> None:
    settings = load_settings()
    settings.hub_token = "hf_saved_secret"
    dialog = PublishDialog(settings, bundle_copy("qwen3-draft-noisy"))
    qtbot.addWidget(dialog)
    texts = _texts(dialog)
    assert "the token saved in DraftDeck's settings" in texts
    assert "hf_saved_secret" not in texts


def test_the_dialog_says_what_is_wrong_before_publishing(
    qtbot: QtBot, hub_env: FakeHub, tmp_path: Path, bundle_copy: Copy
) -> None:
    dialog = _dialog(qtbot, bundle_copy("qwen3-draft-noisy"), "not a repo id")
    qtbot.waitUntil(lambda: "not of the form owner/name" in dialog.summary.text(), timeout=WAIT_MS)
    assert not dialog.start_button.isEnabled()
    empty = tmp_path / "not-a-pack"
    empty.mkdir()
    dialog.repo_edit.setText(REPO)
    dialog.folder_edit.setText(str(empty))
    qtbot.waitUntil(lambda: "File: " in dialog.summary.text(), timeout=WAIT_MS)
    assert str(empty) in dialog.summary.text()
    assert not dialog.start_button.isEnabled()
